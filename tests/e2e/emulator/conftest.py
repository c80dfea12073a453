"""Fixtures for the fake ModelArts tests: both fakes in this process (``cloud``), the official
``huaweicloudsdkmodelarts`` client (``client``) and ``harness`` (job bodies, OBS access, polling).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkcore.http.http_config import HttpConfig
from huaweicloudsdkmodelarts.v1 import ModelArtsClient
from huaweicloudsdkmodelarts.v1.model import (
    ShowTrainingJobDetailsRequest,
    ShowTrainingJobLogsPreviewRequest,
)

from majob.emulator.cloud import EmulatedCloud
from majob.emulator.obs.models import Blob, ObsBackend
from majob.emulator.statefile import EmulatorEndpoints
from majob.testing import wait_until

BUCKET = "majob-demo"
TERMINAL = ("Completed", "Failed", "Terminated", "Abnormal")
ENGINE = {
    "engine_name": "PyTorch",
    "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
}


def client_for(endpoints: EmulatorEndpoints, secret_key: str | None = None) -> ModelArtsClient:
    config = HttpConfig.get_default_config()
    config.retry_times = 0
    credentials = BasicCredentials(
        endpoints.access_key, secret_key or endpoints.secret_key, endpoints.project_id
    )
    return (
        ModelArtsClient.new_builder()
        .with_http_config(config)
        .with_credentials(credentials)
        .with_endpoint(endpoints.modelarts)
        .build()
    )


def put(backend: ObsBackend, key: str, data: bytes | str, bucket: str = BUCKET) -> None:
    raw = data.encode() if isinstance(data, str) else data
    backend.put_object(bucket, key, Blob(len(raw), hashlib.md5(raw).digest(), data=raw))


def read(backend: ObsBackend, key: str, bucket: str = BUCKET) -> bytes:
    with backend.get_object(bucket, key).blob.open() as handle:
        return handle.read()


def job_body(name: str, prefix: str = "jobs/a", **changes: Any) -> dict[str, Any]:
    """A preset-engine body over ``/majob-demo/<prefix>/code/train.py`` with one input and
    output and a log export path; ``changes`` replace top-level algorithm/spec keys."""
    algorithm: dict[str, Any] = {
        "code_dir": f"/{BUCKET}/{prefix}/code/",
        "boot_file": f"/{BUCKET}/{prefix}/code/train.py",
        "engine": dict(ENGINE),
        "parameters": [{"name": "epochs", "value": "1"}],
        "inputs": [
            {"name": "data_url", "remote": {"obs": {"obs_url": f"/{BUCKET}/{prefix}/data/"}}}
        ],
        "outputs": [
            {"name": "train_url", "remote": {"obs": {"obs_url": f"/{BUCKET}/{prefix}/out/"}}}
        ],
        "environments": {},
    }
    spec: dict[str, Any] = {
        "resource": {"flavor_id": "modelarts.vm.cpu.8u", "node_count": 1},
        "log_export_path": {"obs_url": f"/{BUCKET}/{prefix}/logs/"},
    }
    for key, value in changes.items():
        (spec if key in ("resource", "log_export_path") else algorithm)[key] = value
    return {"kind": "job", "metadata": {"name": name}, "algorithm": algorithm, "spec": spec}


TRAIN = """\
import argparse, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--epochs", type=int)
args, _ = parser.parse_known_args()
data = open(os.path.join(args.data_url, "numbers.txt")).read().split()
total = sum(int(x) for x in data)
print(f"sum={total} epochs={args.epochs} task={os.environ['VC_TASK_INDEX']}", flush=True)
with open(os.path.join(args.train_url, "result.txt"), "w") as out:
    out.write(str(total))
sys.exit(int(os.environ.get("EXIT_CODE", "0")))
"""


def upload_job(backend: ObsBackend, prefix: str = "jobs/a", script: str = TRAIN) -> None:
    put(backend, f"{prefix}/code/train.py", script)
    put(backend, f"{prefix}/data/numbers.txt", "1 2 3 4")


def wait_phase(
    client: ModelArtsClient, job_id: str, phases: tuple[str, ...] = TERMINAL, timeout: float = 60
) -> Any:
    """Poll until the job is in one of ``phases``; its last ``ShowTrainingJobDetails``."""
    phase = "unknown"

    def shown() -> Any:
        nonlocal phase
        job = client.show_training_job_details(
            ShowTrainingJobDetailsRequest(training_job_id=job_id)
        )
        phase = job.status.phase
        return job if phase in phases else None

    return wait_until(shown, lambda: f"job {job_id}, still {phase}", timeout=timeout, interval=0.02)


class Harness:
    """What a test needs around one emulated cloud."""

    bucket = BUCKET
    train = TRAIN

    def __init__(self, cloud: EmulatedCloud) -> None:
        self.cloud = cloud
        self.client = client_for(cloud.endpoints)

    @property
    def backend(self) -> ObsBackend:
        return self.cloud.obs.backend

    def client_for(self, secret_key: str | None = None) -> ModelArtsClient:
        return client_for(self.cloud.endpoints, secret_key)

    def put(self, key: str, data: bytes | str) -> None:
        put(self.backend, key, data)

    def read(self, key: str) -> bytes:
        return read(self.backend, key)

    def keys(self, prefix: str) -> list[str]:
        return [o.key for o in self.backend.list_objects(BUCKET, prefix=prefix).objects]

    def body(self, name: str, prefix: str = "jobs/a", **changes: Any) -> dict[str, Any]:
        return job_body(name, prefix, **changes)

    def upload_job(self, prefix: str = "jobs/a", script: str = TRAIN) -> None:
        upload_job(self.backend, prefix, script)

    def wait(self, job_id: str, phases: tuple[str, ...] = TERMINAL, timeout: float = 60) -> Any:
        return wait_phase(self.client, job_id, phases, timeout)

    def log(self, job_id: str, task: str = "worker-0") -> str:
        """The task's log preview; "" while the job has no log yet (ModelArts answers 204 with no
        body, ModelArts.2776, and the SDK's ``content`` is then None): an answer, not an error."""
        answer = self.client.show_training_job_logs_preview(
            ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id=task)
        )
        return answer.content or ""


@pytest.fixture
def cloud(tmp_path: Path) -> Iterator[EmulatedCloud]:
    with EmulatedCloud(tmp_path / "emulator", upload_period=0.2) as running:
        yield running


@pytest.fixture
def harness(cloud: EmulatedCloud) -> Harness:
    return Harness(cloud)


@pytest.fixture
def client(harness: Harness) -> ModelArtsClient:
    return harness.client

"""What an emulated restart costs: the same one-line job with and without a node death at its
first step line (``fault-tolerance/job-retry-num: "1"``), side by side, on 1 and 2 nodes.

The difference of the median durations (create to Completed, polled with the real
``huaweicloudsdkmodelarts`` client every 10 ms) is the restart overhead: stopping the other
nodes, new containers, the code downloaded again, and the second run's start (a Python process
per node). Goal (issue 23): under 2 s.

    .venv/bin/python bench/restart_overhead.py [--runs 5]
"""

from __future__ import annotations

import argparse
import hashlib
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from huaweicloudsdkcore.auth.credentials import BasicCredentials
from huaweicloudsdkmodelarts.v1 import ModelArtsClient
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    ShowTrainingJobDetailsRequest,
)

from majob.emulator.cloud import EmulatedCloud
from majob.emulator.obs.models import Blob

BUCKET = "majob-demo"
ENGINE = {
    "engine_name": "PyTorch",
    "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
}


def _client(cloud: EmulatedCloud) -> Any:
    points = cloud.endpoints
    credentials = BasicCredentials(points.access_key, points.secret_key, points.project_id)
    return (
        ModelArtsClient.new_builder()
        .with_credentials(credentials)
        .with_endpoint(points.modelarts)
        .build()
    )


def _body(name: str, nodes: int) -> dict[str, Any]:
    return {
        "kind": "job",
        "metadata": {"name": name, "annotations": {"fault-tolerance/job-retry-num": "1"}},
        "algorithm": {
            "code_dir": f"/{BUCKET}/bench/code/",
            "boot_file": f"/{BUCKET}/bench/code/train.py",
            "engine": dict(ENGINE),
            "outputs": [
                {
                    "name": "train_url",
                    "remote": {"obs": {"obs_url": f"/{BUCKET}/bench/out/"}},
                    "prefetch_to_local": True,
                }
            ],
        },
        "spec": {"resource": {"flavor_id": "modelarts.vm.cpu.8u", "node_count": nodes}},
    }


def _run(cloud: EmulatedCloud, client: Any, name: str, nodes: int, fault: bool) -> float:
    if fault:
        cloud.modelarts.add_job_fault(name=f"^{name}$", node_fault="dies", at_step=1)
    started = time.monotonic()
    request = CreateTrainingJobRequest(body=_body(name, nodes))
    job_id = client.create_training_job(request).metadata.id
    while True:
        job = client.show_training_job_details(
            ShowTrainingJobDetailsRequest(training_job_id=job_id)
        )
        if job.status.phase in ("Completed", "Failed", "Terminated", "Abnormal"):
            break
        time.sleep(0.01)
    took = time.monotonic() - started
    runs = len(job.status.running_records or [])
    if job.status.phase != "Completed" or runs != (2 if fault else 1):
        raise SystemExit(f"{name}: {job.status.phase} after {runs} runs")
    return took


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, EmulatedCloud(Path(tmp)) as cloud:
        script = b"print('step 1', flush=True)\n"
        blob = Blob(len(script), hashlib.md5(script).digest(), data=script)
        cloud.obs.backend.put_object(BUCKET, "bench/code/train.py", blob)
        client = _client(cloud)
        for nodes in (1, 2):
            plain = [_run(cloud, client, f"p{nodes}-{i}", nodes, False) for i in range(args.runs)]
            faulty = [_run(cloud, client, f"f{nodes}-{i}", nodes, True) for i in range(args.runs)]
            base, restarted = statistics.median(plain), statistics.median(faulty)
            print(
                f"{nodes} node(s): no fault {base:.2f}s, one restart {restarted:.2f}s: "
                f"overhead {restarted - base:.2f}s (median of {args.runs}; goal < 2 s)"
            )


if __name__ == "__main__":
    main()

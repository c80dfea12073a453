"""Create bodies the reference allows that the notebook SDK sends (modelarts.md §2.3): a custom
image whose command brings its own code (``image_url`` + ``command``, no ``code_dir``), and a
dedicated CPU pool (``pool_id``, no ``flavor_id``). The official client sends them."""

from __future__ import annotations

from typing import Any

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
)

from tests.e2e.emulator.conftest import ENGINE, Harness


def created(harness: Harness, body: dict[str, Any]) -> Any:
    job_id = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    return harness.wait(job_id)


def test_a_custom_image_with_a_command_needs_no_code_dir(harness: Harness) -> None:
    body = harness.body(
        "own-code", engine={"image_url": "org/img:tag"}, inputs=[], outputs=[], parameters=[]
    )
    body["algorithm"]["command"] = "echo from-the-image && pwd"
    del body["algorithm"]["code_dir"], body["algorithm"]["boot_file"]
    job = created(harness, body)
    assert job.status.phase == "Completed"
    log = harness.log(job.metadata.id)
    assert "from-the-image" in log
    assert "no code dir" in log


def test_a_pool_without_a_flavor_is_a_dedicated_cpu_pool(harness: Harness) -> None:
    harness.upload_job()
    body = harness.body("in-pool", resource={"pool_id": "pool-cpu-0001", "node_count": 2})
    job = created(harness, body)
    assert job.status.phase == "Completed"
    assert job.spec.resource.pool_id == "pool-cpu-0001"


@pytest.mark.parametrize(
    ("algorithm", "resource", "code", "words"),
    [
        # code_dir and boot_file come together, even with a custom image's command
        ({"engine": {"image_url": "org/img:tag"}, "command": "echo x",
          "boot_file": "/majob-demo/jobs/a/code/train.py"}, None, "ModelArts.2757", "missing"),
        # a preset engine still needs its code
        ({"engine": dict(ENGINE)}, None, "ModelArts.2757", "missing"),
        # a dedicated CPU pool does not run an Ascend engine
        (None, {"pool_id": "pool-cpu-0001"}, "ModelArts.2763", "does not run on"),
    ],
)  # fmt: skip
def test_what_stays_refused(
    harness: Harness,
    algorithm: dict[str, Any] | None,
    resource: dict[str, Any] | None,
    code: str,
    words: str,
) -> None:
    harness.upload_job()
    body = harness.body("refused")
    if algorithm is not None:
        body["algorithm"] = {**algorithm}
    if resource is not None:
        body["spec"]["resource"] = resource
        body["algorithm"]["engine"] = {
            "engine_name": "Ascend-Powered-Engine",
            "engine_version": "pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64",
        }
    with pytest.raises(ClientRequestException) as caught:
        harness.client.create_training_job(CreateTrainingJobRequest(body=body))
    assert (caught.value.status_code, caught.value.error_code) == (400, code)
    assert words in caught.value.error_msg

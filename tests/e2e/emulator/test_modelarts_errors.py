"""The fake ModelArts refuses what the service refuses, with the documented codes and bodies."""

from __future__ import annotations

from typing import Any

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    DeleteTrainingJobRequest,
    ShowTrainingJobDetailsRequest,
    ShowTrainingJobEnginesRequest,
    StopTrainingJobRequest,
)

from tests.e2e.emulator.conftest import ENGINE, Harness


def refused(harness: Harness, body: dict[str, Any]) -> ClientRequestException:
    with pytest.raises(ClientRequestException) as caught:
        harness.client.create_training_job(CreateTrainingJobRequest(body=body))
    return caught.value


def test_a_wrong_secret_key_is_refused_with_401_and_no_secret(harness: Harness) -> None:
    client = harness.client_for(secret_key="not-the-right-secret-key-0000000000000000")
    with pytest.raises(ClientRequestException) as caught:
        client.show_training_job_engines(ShowTrainingJobEnginesRequest())
    error = caught.value
    assert error.status_code == 401 and error.error_code == "APIGW.0301"
    assert "verify aksk signature fail" in error.error_msg
    assert harness.cloud.endpoints.secret_key not in str(error)
    assert "not-the-right" not in str(error)


def test_an_unknown_job_is_404(harness: Harness) -> None:
    with pytest.raises(ClientRequestException) as caught:
        harness.client.show_training_job_details(
            ShowTrainingJobDetailsRequest(training_job_id="00000000-0000-0000-0000-000000000000")
        )
    assert caught.value.status_code == 404
    assert "does not exist" in caught.value.error_msg


def test_a_name_any_existing_job_has_is_2751_until_that_job_is_deleted(harness: Harness) -> None:
    """ValidateTrainingJobName (API reference): a job is created only when its name does not
    exist, so an ended job holds its name as an active one does; deleting it frees the name."""
    harness.upload_job(script="import time\ntime.sleep(60)\n")
    body = harness.body("taken-name", inputs=[], outputs=[])
    first = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    error = refused(harness, body)
    assert (error.status_code, error.error_code) == (400, "ModelArts.2751")
    assert first in error.error_msg
    harness.client.stop_training_job(
        StopTrainingJobRequest(training_job_id=first, body={"action_type": "terminate"})
    )
    harness.wait(first)
    ended = refused(harness, body)
    assert ended.error_code == "ModelArts.2751"
    assert f"{first} (Terminated)" in ended.error_msg
    harness.client.delete_training_job(DeleteTrainingJobRequest(training_job_id=first))
    second = harness.client.create_training_job(CreateTrainingJobRequest(body=body))
    assert second.metadata.id != first  # the name is free once the job is deleted


@pytest.mark.parametrize(
    ("change", "code", "words"),
    [
        ({"inputs": [{"name": "data url", "remote": {"obs": {"obs_url": "/majob-demo/d/"}}}]},
         "ModelArts.2753", "is invalid"),
        ({"inputs": [{"name": "data_url"}]}, "ModelArts.2753", "obs_url is missing"),
        ({"outputs": [{"name": "out", "remote": {"obs": {"obs_url": "/majob-demo/o/file.txt"}}}]},
         "ModelArts.2753", "must be a directory"),
        ({"inputs": [{"name": "x", "remote": {"obs": {"obs_url": "/majob-demo/a/"}}},
                     {"name": "x", "remote": {"obs": {"obs_url": "/majob-demo/b/"}}}]},
         "ModelArts.2753", "used by another"),
        ({"code_dir": "/majob-demo/nothing/here/"}, "ModelArts.2757", "does not exist"),
        ({"boot_file": "/majob-demo/jobs/a/code/missing.py"}, "ModelArts.2758", "does not exist"),
        ({"boot_file": "/majob-demo/elsewhere/train.py"}, "ModelArts.2758", "not inside"),
        ({"resource": {"flavor_id": "modelarts.vm.cpu.banana"}}, "ModelArts.2763", "is invalid"),
        ({"resource": {"flavor_id": "modelarts.vm.cpu.2u", "node_count": 2}}, "ModelArts.2763",
         "exceeds the maximum 1"),
        ({"resource": {"flavor_id": "modelarts.bm.snt9.xlarge.8"}}, "ModelArts.2763",
         "does not run on flavor"),
        ({"engine": {"engine_name": "PyTorch", "engine_version": "pytorch_99"}}, "ModelArts.2764",
         "does not exist"),
        ({"engine": {"engine_id": "banana"}}, "ModelArts.2764", "does not exist"),
    ],
)  # fmt: skip
def test_documented_validation_codes(
    harness: Harness, change: dict[str, Any], code: str, words: str
) -> None:
    harness.upload_job()
    error = refused(harness, harness.body("bad-body", **change))
    assert (error.status_code, error.error_code) == (400, code)
    assert words in error.error_msg


@pytest.mark.parametrize(
    ("change", "status", "code", "words"),
    [
        ({"kind": "visualization_job"}, 400, "ModelArts.0101", "not supported by the emulator"),
        ({"metadata": {"name": "bad name!"}}, 400, "ModelArts.0101", "metadata.name"),
        ({"algorithm": {"id": "a1b2"}}, 400, "ModelArts.2755", "algorithm not found"),
        ({"algorithm": {"environments": {"1BAD": "x"}}}, 400, "ModelArts.0101", "not a variable name"),
        ({"algorithm": {"inputs": [{"name": "d", "remote": {"dataset": {"id": "x"}}}]}}, 400,
         "ModelArts.2753", "no datasets"),
        ({"spec": {"resource": {"flavor_id": "modelarts.vm.cpu.8u", "node_count": 0}}}, 400,
         "ModelArts.0101", "node_count"),
    ],
)  # fmt: skip
def test_other_malformed_bodies(
    harness: Harness, change: dict[str, Any], status: int, code: str, words: str
) -> None:
    harness.upload_job()
    body = harness.body("malformed")
    for part, value in change.items():
        body[part] = {**body[part], **value} if isinstance(body.get(part), dict) else value
    error = refused(harness, body)
    assert (error.status_code, error.error_code) == (status, code)
    assert words in error.error_msg


def test_bodies_the_service_documents_are_accepted(harness: Harness) -> None:
    """obs:// URLs, an engine by id, a custom image with a command, a preset engine in a
    custom image."""
    harness.upload_job()
    by_id = harness.body("by-engine-id", engine={"engine_id": "pytorch-1.8.0"})
    by_id["algorithm"]["code_dir"] = "obs://majob-demo/jobs/a/code/"
    by_id["algorithm"]["boot_file"] = "obs://majob-demo/jobs/a/code/train.py"
    custom = harness.body(
        "custom-image",
        engine={"image_url": "org/img:tag"},
        command="python ${MA_JOB_DIR}/code/train.py",
    )
    del custom["algorithm"]["boot_file"]
    both = harness.body("preset-in-custom", engine={**ENGINE, "image_url": "org/img:tag"})
    for body in (by_id, custom, both):
        created = harness.client.create_training_job(CreateTrainingJobRequest(body=body))
        job = harness.wait(created.metadata.id)
        assert job.status.phase == "Completed", body["metadata"]


def test_terminate_is_refused_for_an_ended_job(harness: Harness) -> None:
    harness.upload_job()
    job_id = harness.client.create_training_job(
        CreateTrainingJobRequest(body=harness.body("ends-fast"))
    ).metadata.id
    harness.wait(job_id)
    with pytest.raises(ClientRequestException) as caught:
        harness.client.stop_training_job(
            StopTrainingJobRequest(training_job_id=job_id, body={"action_type": "terminate"})
        )
    assert caught.value.status_code == 400 and "Completed" in caught.value.error_msg

"""The control plane of a fake ModelArts in another process's view: plain HTTP, no signing; and
the ``emulated_cloud_env`` fixture behind ``--profile emulator``."""

from __future__ import annotations

import json
import urllib.request
from typing import Any

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ServerResponseException
from huaweicloudsdkmodelarts.v1.model import CreateTrainingJobRequest, ShowTrainingJobFlavorsRequest

from majob.emulator.statefile import EmulatorEndpoints
from majob.spec.profiles import load_profile
from tests.e2e.emulator.conftest import Harness, client_for


def call(endpoint: str, method: str, path: str, body: Any = None) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(f"{endpoint}/_majob/{path}", data=data, method=method)
    with urllib.request.urlopen(request, timeout=10) as answer:
        return json.loads(answer.read())


def test_faults_job_faults_and_the_log_over_http(harness: Harness) -> None:
    endpoint = harness.cloud.endpoints.modelarts
    rule = call(endpoint, "POST", "faults", {"status": 503, "path": "flavors$", "count": 1})
    assert rule["fired"] == 0 and call(endpoint, "GET", "faults")[0]["status"] == 503
    with pytest.raises(ServerResponseException):
        harness.client.show_training_job_flavors(ShowTrainingJobFlavorsRequest())
    harness.client.show_training_job_flavors(ShowTrainingJobFlavorsRequest())
    log = call(endpoint, "GET", "log")
    assert [(e["status"], e["fault"]) for e in log] == [(503, "status:503"), (200, None)]
    assert (
        call(endpoint, "DELETE", "log") == {"cleared": True} and call(endpoint, "GET", "log") == []
    )

    fault = call(endpoint, "POST", "job-faults", {"fail_at": "Pending", "count": 1})
    assert fault["fail_at"] == "Pending"
    harness.upload_job()
    created = harness.client.create_training_job(CreateTrainingJobRequest(body=harness.body("x")))
    assert harness.wait(created.metadata.id).status.phase == "Failed"
    assert call(endpoint, "GET", "jobs") == {"Failed": 1}
    assert call(endpoint, "DELETE", "job-faults") == {"cleared": True}
    with pytest.raises(urllib.error.HTTPError) as bad:
        call(endpoint, "POST", "job-faults", {"fail_at": "Completed"})
    assert bad.value.code == 400
    bad.value.close()


def test_the_fixture_serves_the_emulator_profile(emulated_cloud_env: EmulatorEndpoints) -> None:
    profile = load_profile("emulator")
    assert profile.emulated and profile.modelarts_endpoint == emulated_cloud_env.modelarts
    answer = client_for(emulated_cloud_env).show_training_job_flavors(
        ShowTrainingJobFlavorsRequest()
    )
    assert answer.total_count > 0

"""The official huaweicloudsdkmodelarts client drives every endpoint of the fake ModelArts."""

from __future__ import annotations

import json
import urllib.request

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkmodelarts.v1 import ModelArtsClient
from huaweicloudsdkmodelarts.v1.model import (
    ChangeTrainingJobDescriptionRequest,
    CreateTrainingJobRequest,
    DeleteTrainingJobRequest,
    ListTrainingJobEventsRequest,
    ListTrainingJobsRequest,
    ListTrainingJobTasksRequest,
    ShowTrainingJobDetailsRequest,
    ShowTrainingJobEnginesRequest,
    ShowTrainingJobFlavorsRequest,
    ShowTrainingJobLogsFromAomRequest,
    ShowTrainingJobLogsPreviewRequest,
    ShowTrainingJobMetricsRequest,
)

from tests.e2e.emulator.conftest import Harness
from tests.e2e.emulator.signed import signed_get


def create(client: ModelArtsClient, body: dict[str, object]) -> str:
    job_id: str = client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    return job_id


def search(client: ModelArtsClient, **body: object) -> object:
    return client.list_training_jobs(ListTrainingJobsRequest(body=body))


def test_create_runs_the_job_and_show_reports_it(harness: Harness) -> None:
    harness.upload_job()
    body = harness.body("sum-numbers")
    body["metadata"]["annotations"] = {"majob/submit-id": "d1g3st"}  # type: ignore[index]
    created = harness.client.create_training_job(CreateTrainingJobRequest(body=body))
    assert created.status.phase == "Creating"
    assert created.metadata.annotations["majob/submit-id"] == "d1g3st"
    job = harness.wait(created.metadata.id)
    assert job.status.phase == "Completed"
    assert job.status.tasks == ["worker-0"]
    assert [(t.task, t.exit_code) for t in job.status.task_statuses] == [("worker-0", 0)]
    assert job.metadata.annotations["majob/submit-id"] == "d1g3st"
    assert job.spec.resource.flavor_detail.flavor_type == "CPU"
    assert job.algorithm.outputs[0].local_dir == "/home/ma-user/modelarts/outputs/train_url_0"
    assert harness.read("jobs/a/out/result.txt") == b"10"
    exported = f"jobs/a/logs/modelarts-job-{job.metadata.id}-worker-0.log"
    assert b"sum=10 epochs=1 task=0" in harness.read(exported)


def test_search_filters_by_name_and_phase_and_pages(harness: Harness) -> None:
    harness.upload_job()
    ids = [create(harness.client, harness.body(f"page-{i}")) for i in range(3)]
    for job_id in ids:
        harness.wait(job_id)
    found = search(
        harness.client, filters=[{"key": "name", "operator": "like", "value": ["page-"]}]
    )
    assert found.total == 3 and [j.metadata.id for j in found.items] == ids[::-1]
    exact = search(harness.client, filters=[{"key": "name", "operator": "in", "value": ["page-1"]}])
    assert [j.metadata.id for j in exact.items] == [ids[1]]
    page = search(harness.client, offset=1, limit=1, order="asc")
    assert page.count == 1 and page.items[0].metadata.id == ids[1] and page.total == 3
    done = search(
        harness.client, filters=[{"key": "phase", "operator": "in", "value": ["Completed"]}]
    )
    assert done.total == 3
    running = search(
        harness.client, filters=[{"key": "phase", "operator": "in", "value": ["Running"]}]
    )
    assert running.total == 0


def test_update_description_events_tasks_metrics_and_delete(harness: Harness) -> None:
    harness.upload_job()
    job_id = create(harness.client, harness.body("describe-me"))
    harness.wait(job_id)
    client = harness.client
    client.change_training_job_description(
        ChangeTrainingJobDescriptionRequest(
            training_job_id=job_id, body={"description": "new words"}
        )
    )
    shown = client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=job_id))
    assert shown.metadata.description == "new words"
    events = client.list_training_job_events(ListTrainingJobEventsRequest(training_job_id=job_id))
    messages = [e.message for e in events.events]
    assert events.total == len(messages) and messages[0].startswith("the training job describe-me")
    assert messages[-1] == "the job completed"
    tasks = client.list_training_job_tasks(ListTrainingJobTasksRequest(training_job_id=job_id))
    assert [t.task for t in tasks.body] == ["worker-0"]
    metrics = client.show_training_job_metrics(
        ShowTrainingJobMetricsRequest(training_job_id=job_id, task_id="worker-0")
    )
    assert {m.metric for m in metrics.metrics} >= {"cpuUsage", "memUsage"}
    client.delete_training_job(DeleteTrainingJobRequest(training_job_id=job_id))
    with pytest.raises(ClientRequestException) as caught:
        client.show_training_job_details(ShowTrainingJobDetailsRequest(training_job_id=job_id))
    assert caught.value.status_code == 404


def test_log_preview_lines_and_url(harness: Harness) -> None:
    script = "for i in range(7):\n    print(f'line {i}')\n"
    harness.put("jobs/log/code/train.py", script)
    body = harness.body("logs", "jobs/log", inputs=[], outputs=[])
    job_id = create(harness.client, body)
    harness.wait(job_id)
    client = harness.client
    preview = client.show_training_job_logs_preview(
        ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id="worker-0")
    )
    assert "line 0\nline 1\n" in preview.content and preview.current_size == preview.full_size
    lines = preview.content.splitlines()
    first = lines.index("line 0") + 1  # line numbers count from 1

    def page(base: int, count: int, order: str = "asc") -> object:
        return client.show_training_job_logs_from_aom(
            ShowTrainingJobLogsFromAomRequest(
                training_job_id=job_id, task_id="worker-0", base_line=base, lines=count, order=order
            )
        )

    chunk = page(first, 3)  # after "line 0"
    assert chunk.content == "line 1\nline 2\nline 3\n" and chunk.lines == 3
    assert (chunk.start_line, chunk.end_line) == (str(first + 1), str(first + 3))
    rest = page(int(chunk.end_line), 500)
    assert rest.content.startswith("line 4\nline 5\nline 6\n")
    assert page(len(lines), 10).lines == 0
    tail = page(0, 2, "desc")
    assert tail.content == "".join(f"{line}\n" for line in lines[-2:])
    # The log URL is not in the SDK: a signed request through the SDK's signer.
    answer = signed_get(harness.cloud.endpoints, f"training-jobs/{job_id}/tasks/worker-0/logs/url")
    with urllib.request.urlopen(json.loads(answer)["obs_url"], timeout=10) as log:
        assert b"line 6\n" in log.read()


def test_flavors_and_engines(client: ModelArtsClient) -> None:
    flavors = client.show_training_job_flavors(ShowTrainingJobFlavorsRequest())
    ids = {f.flavor_id for f in flavors.flavors}
    assert {"modelarts.vm.cpu.8u", "modelarts.p3.large.public", "modelarts.bm.snt9.xlarge.8"} <= ids
    ascend = client.show_training_job_flavors(ShowTrainingJobFlavorsRequest(flavor_type="Ascend"))
    assert ascend.total_count == len(ascend.flavors) >= 1
    assert all(
        f.flavor_type == "Ascend" and int(f.flavor_info.npu.unit_num) > 0 for f in ascend.flavors
    )
    cpu8 = next(f for f in flavors.flavors if f.flavor_id == "modelarts.vm.cpu.8u")
    assert (cpu8.flavor_info.max_num, cpu8.flavor_info.cpu.core_num) == (16, 8)
    engines = client.show_training_job_engines(ShowTrainingJobEnginesRequest())
    names = {(e.engine_name, e.engine_version) for e in engines.items}
    assert ("PyTorch", "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64") in names
    assert engines.total == len(engines.items)

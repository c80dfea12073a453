"""Documented behaviour of the fake ModelArts beyond the happy path (issue 21): a log that is
not there yet, events by time, the documented search keys, signed log URLs that expire, measured
metrics, buckets checked at create, the body's container paths, and the name check."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    DeleteTrainingJobRequest,
    ListTrainingJobEventsRequest,
    ListTrainingJobsRequest,
    ShowTrainingJobLogsPreviewRequest,
    ShowTrainingJobMetricsRequest,
    ValidateTrainingJobNameRequest,
)

from tests.e2e.emulator.conftest import Harness
from tests.e2e.emulator.signed import signed_get


def create(harness: Harness, body: dict[str, Any]) -> str:
    created = harness.client.create_training_job(CreateTrainingJobRequest(body=body))
    job_id: str = created.metadata.id
    return job_id


def test_the_log_of_a_job_still_creating_is_2776_not_ready(harness: Harness) -> None:
    harness.cloud.modelarts.add_job_fault(delays={"Creating": 600})
    harness.upload_job()
    job_id = create(harness, harness.body("slow-start"))
    preview = harness.client.show_training_job_logs_preview(
        ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id="worker-0")
    )
    assert preview.content is None  # 204: no body
    [call] = [c for c in harness.cloud.modelarts.log.entries() if c.path.endswith("/preview")]
    assert (call.status, call.error) == (204, "ModelArts.2776")


def test_events_are_bounded_by_start_and_end_time(harness: Harness) -> None:
    harness.upload_job()
    job_id = create(harness, harness.body("timed-events"))
    harness.wait(job_id)

    def events(**query: Any) -> Any:
        return harness.client.list_training_job_events(
            ListTrainingJobEventsRequest(training_job_id=job_id, **query)
        )

    every = events()
    assert every.total >= 3
    times = [e.time for e in every.events]  # ISO-8601, ms: they sort as text
    # Two events may share a millisecond: cut where the time changes.
    cut = next(t for t in times if t > times[0])
    window = events(start_time=cut, end_time=times[-1])
    assert [e.time for e in window.events] == [t for t in times if t >= cut]
    assert window.total < every.total
    before = events(end_time=times[0])
    assert [e.time for e in before.events] == [t for t in times if t <= times[0]]
    in_ms = events(start_time="0", end_time="1").total
    assert in_ms == 0  # ms since the epoch are read too: nothing happened in 1970
    with pytest.raises(ClientRequestException) as caught:
        events(start_time="yesterday")
    assert caught.value.status_code == 400 and "is not a time" in caught.value.error_msg


def test_search_takes_the_documented_filter_keys(harness: Harness) -> None:
    harness.upload_job()
    job_id = create(harness, harness.body("filtered"))

    def found(key: str, operator: str, value: str) -> list[str]:
        body = {"filters": [{"key": key, "operator": operator, "value": [value]}]}
        answer = harness.client.list_training_jobs(ListTrainingJobsRequest(body=body))
        return [item.metadata.id for item in answer.items]

    assert found("kind", "in", "job") == [job_id]
    assert found("kind", "in", "hetero_job") == []
    assert found("algorithm_name", "not", "some-algorithm") == [job_id]
    assert found("algorithm_name", "in", "some-algorithm") == []
    assert found("user_id", "in", "00000000000000000000000000000002") == [job_id]
    with pytest.raises(ClientRequestException) as caught:
        found("colour", "in", "red")
    assert caught.value.status_code == 400
    assert caught.value.error_msg == "filter key 'colour' is not supported"


def log_url(harness: Harness, job_id: str, content_type: str | None = None) -> str:
    query = [("Content-Type", content_type)] if content_type else None
    answer = signed_get(
        harness.cloud.endpoints, f"training-jobs/{job_id}/tasks/worker-0/logs/url", query
    )
    url: str = json.loads(answer)["obs_url"]
    return url


def refusal(url: str) -> tuple[int, dict[str, str]]:
    with pytest.raises(urllib.error.HTTPError) as caught:
        urllib.request.urlopen(url, timeout=10)
    return caught.value.code, json.loads(caught.value.read())


def test_a_log_url_is_signed_and_expires(harness: Harness) -> None:
    harness.put("jobs/u/code/train.py", "print('hello from the log')\n")
    job_id = create(harness, harness.body("url-log", "jobs/u", inputs=[], outputs=[]))
    harness.wait(job_id)
    url = log_url(harness, job_id)
    assert "AWSAccessKeyId=" in url and "Expires=" in url and "Signature=" in url
    with urllib.request.urlopen(url, timeout=10) as answer:
        assert b"hello from the log\n" in answer.read()
        assert answer.headers["Content-Type"] == "text/plain"  # a preview, by default
    download = log_url(harness, job_id, "application/octet-stream")
    with urllib.request.urlopen(download, timeout=10) as answer:
        assert answer.headers["Content-Type"] == "application/octet-stream"
    as_text = download.replace("application%2Foctet-stream", "text%2Fplain")
    assert refusal(as_text)[1]["Code"] == "SignatureDoesNotMatch"  # the type is signed too
    unsigned = url.split("?")[0]
    status, refused = refusal(unsigned)
    assert (status, refused["Code"]) == (403, "AccessDenied")
    expires = int(url.split("Expires=")[1].split("&")[0])
    later = url.replace(f"Expires={expires}", f"Expires={expires + 3600}")
    assert refusal(later)[1]["Code"] == "SignatureDoesNotMatch"
    other_task = url.replace("/worker-0?", "/worker-1?")
    assert refusal(other_task)[1]["Code"] == "SignatureDoesNotMatch"
    harness.cloud.modelarts.log_urls.valid_seconds = -1  # signed already past its expiry
    assert refusal(log_url(harness, job_id)) == (
        403,
        {"Code": "AccessDenied", "Message": "Request has expired"},
    )


BUSY = """\
import time
block = bytearray(32 * 1024 * 1024)  # memory the sample must see
end = time.monotonic() + 2.0
while time.monotonic() < end:
    sum(range(1000))
print("busy done", len(block), flush=True)
"""


def test_metrics_are_measured_from_the_job_processes(harness: Harness) -> None:
    harness.put("jobs/m/code/train.py", BUSY)
    job_id = create(harness, harness.body("measured", "jobs/m", inputs=[], outputs=[]))
    harness.wait(job_id)
    answer = harness.client.show_training_job_metrics(
        ShowTrainingJobMetricsRequest(training_job_id=job_id, task_id="worker-0")
    )
    series = {m.metric: m.value for m in answer.metrics}
    assert list(series) == [
        "cpuUsage",
        "memUsage",
        "gpuUtil",
        "gpuMemUsage",
        "npuUtil",
        "npuMemUsage",
    ]
    assert len(series["cpuUsage"]) == 1  # one minute, under way when the job ended
    assert all(len(values) == 1 for values in series.values())
    # Measured, not "n/a": a share of the flavor's 8 vCPUs and 32 GB (a busy process uses
    # some CPU; 32 MB is resident). The accelerators are not measured: nodes run on the CPU.
    assert 0 < series["cpuUsage"][0] <= 100
    assert 0 < series["memUsage"][0] <= 100
    assert series["gpuUtil"] == [-1.0] and series["npuMemUsage"] == [-1.0]


def test_an_output_or_log_bucket_that_does_not_exist_is_refused_at_create(
    harness: Harness,
) -> None:
    harness.upload_job()
    outputs = [{"name": "train_url", "remote": {"obs": {"obs_url": "/no-such-bucket/out/"}}}]
    with pytest.raises(ClientRequestException) as caught:
        create(harness, harness.body("lost-output", outputs=outputs))
    assert (caught.value.status_code, caught.value.error_code) == (400, "ModelArts.2753")
    assert "bucket no-such-bucket does not exist" in caught.value.error_msg
    with pytest.raises(ClientRequestException) as caught:
        create(harness, harness.body("lost-log", log_export_path={"obs_url": "/no-log-bucket/l/"}))
    assert "bucket no-log-bucket does not exist" in caught.value.error_msg
    listed = harness.client.list_training_jobs(ListTrainingJobsRequest(body={}))
    assert listed.total == 0  # nothing was created, nothing ran


PLACED = """\
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
print("cwd", os.getcwd().replace(os.environ["MA_HOME"], "/home/ma-user"), flush=True)
print("code", os.path.dirname(os.path.abspath(__file__)).replace(os.environ["MA_HOME"], "/home/ma-user"), flush=True)
print("data", sorted(os.listdir(args.data_url)), flush=True)
with open(os.path.join(args.train_url, "seen.txt"), "w") as out:
    out.write(open(os.path.join(args.data_url, "numbers.txt")).read())
"""


def test_the_body_container_paths_are_honoured(harness: Harness) -> None:
    harness.upload_job(script=PLACED)
    body = harness.body("placed")
    algorithm = body["algorithm"]
    algorithm["local_code_dir"] = "/home/ma-user/work"
    algorithm["working_dir"] = "/home/ma-user/work"
    algorithm["inputs"][0]["local_dir"] = "/home/ma-user/my-data"
    algorithm["outputs"][0]["local_dir"] = "/home/ma-user/my-out"
    job_id = create(harness, body)
    job = harness.wait(job_id)
    assert job.status.phase == "Completed"
    assert job.algorithm.inputs[0].local_dir == "/home/ma-user/my-data"
    log = harness.read(f"jobs/a/logs/modelarts-job-{job_id}-worker-0.log").decode()
    assert "cwd /home/ma-user/work\n" in log
    assert "code /home/ma-user/work/code\n" in log
    assert "data ['numbers.txt']\n" in log
    assert harness.read("jobs/a/out/seen.txt") == b"1 2 3 4"  # uploaded from its local_dir


@pytest.mark.parametrize(
    ("field", "value", "words"),
    [
        ("local_code_dir", "/home/ma-user/modelarts/mine", "keeps for itself"),
        ("local_code_dir", "code", "not an absolute container path"),
        ("working_dir", "../up", "not an absolute container path"),
        ("working_dir", "/", "may not be / itself"),
    ],
)
def test_container_paths_outside_what_the_service_allows_are_refused(
    harness: Harness, field: str, value: str, words: str
) -> None:
    harness.upload_job()
    with pytest.raises(ClientRequestException) as caught:
        create(harness, harness.body("misplaced", **{field: value}))
    assert caught.value.status_code == 400 and words in caught.value.error_msg


def test_the_name_check_says_whether_any_job_has_the_name(harness: Harness) -> None:
    harness.upload_job()

    def duplicate(name: str) -> bool:
        answer = harness.client.validate_training_job_name(
            ValidateTrainingJobNameRequest(job_name=name)
        )
        return bool(answer.is_duplicate)

    assert duplicate("checked") is False
    job_id = create(harness, harness.body("checked"))
    harness.wait(job_id)
    assert duplicate("checked") is True  # ended, and still holding its name
    harness.client.delete_training_job(DeleteTrainingJobRequest(training_job_id=job_id))
    assert duplicate("checked") is False

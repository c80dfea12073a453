"""Auto restart in the fake ModelArts, through the official client: the fault-tolerance
annotations, injected node deaths and hangs, the checkpoint output downloaded into each new
container, ``status.running_records`` and the events."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from typing import Any

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    ListTrainingJobEventsRequest,
    StopTrainingJobRequest,
)

from majob.testing import wait_until
from tests.e2e.emulator.conftest import Harness

# Resumes from its checkpoint (one file per node under train_url/ckpt/), saves one per step.
RESUMING = """\
import argparse, os, sys, time
p = argparse.ArgumentParser(); p.add_argument("--train_url"); a, _ = p.parse_known_args()
task = os.environ["VC_TASK_INDEX"]
ckpt = os.path.join(a.train_url, "ckpt", f"step-{task}.txt")
start = int(open(ckpt).read()) if os.path.exists(ckpt) else 0
print(f"resumed from {start}", flush=True)
for step in range(start + 1, int(os.environ.get("STEPS", "5")) + 1):
    os.makedirs(os.path.dirname(ckpt), exist_ok=True)
    open(ckpt + ".tmp", "w").write(str(step))
    os.replace(ckpt + ".tmp", ckpt)
    print(f"step {step}", flush=True)
    time.sleep(0.2)
sys.exit(int(os.environ.get("EXIT_CODE", "0")))
"""


def _body(
    harness: Harness, name: str, annotations: dict[str, str], nodes: int = 1, **env: str
) -> dict[str, Any]:
    body = harness.body(name, resource={"flavor_id": "modelarts.vm.cpu.8u", "node_count": nodes})
    body["metadata"]["annotations"] = annotations
    body["algorithm"]["outputs"][0]["prefetch_to_local"] = True
    body["algorithm"]["environments"] = dict(env)
    return body


def _run(harness: Harness, body: dict[str, Any]) -> Any:
    harness.upload_job(script=RESUMING)
    job_id = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    return harness.wait(job_id)


def _events(harness: Harness, job_id: str) -> list[str]:
    answer = harness.client.list_training_job_events(
        ListTrainingJobEventsRequest(training_job_id=job_id)
    )
    return [e.message for e in answer.events]


def _log(harness: Harness, job_id: str, task: str = "worker-0") -> str:
    return harness.log(job_id, task)


def test_a_node_that_dies_restarts_the_job_which_resumes_and_completes(harness: Harness) -> None:
    harness.cloud.modelarts.add_job_fault(node_fault="dies", node=1, at_step=2)
    job = _run(harness, _body(harness, "two-nodes", {"fault-tolerance/job-retry-num": "2"}, 2))
    assert job.status.phase == "Completed"
    first, second = job.status.running_records
    assert (first.end_recover, first.end_related_task) == ("job_reschedule", "worker-1")
    (recovered,) = first.recover_records
    assert (recovered.fault_scenario, recovered.recover_result) == ("node_fault", "success")
    assert "the node died at step line 2" in first.end_reason
    assert second.start_type == "init_or_rescheduled" and not second.end_recover
    log = _log(harness, job.metadata.id, "worker-1")
    assert "resumed from 0" in log
    # The second run's container got the checkpoint the first had saved (predownloaded).
    resumed = [line for line in log.splitlines() if line.startswith("resumed from")]
    assert len(resumed) == 2 and resumed[1] != "resumed from 0"
    assert any("the job restarts (restart 1 of 2" in m for m in _events(harness, job.metadata.id))


def test_retries_exhausted_fail_the_job_and_say_so(harness: Harness) -> None:
    harness.cloud.modelarts.add_job_fault(node_fault="dies", at_step=1, runs=None)
    job = _run(harness, _body(harness, "doomed", {"fault-tolerance/job-retry-num": "2"}))
    assert (job.status.phase, job.status.secondary_phase) == ("Failed", "Failed")
    records = job.status.running_records
    assert [r.end_recover for r in records] == ["job_reschedule", "job_reschedule", ""]
    assert records[-1].recover_records[0].recover_result == "quotaExceeded"
    assert any("no restarts left: 2 of 2 used" in m for m in _events(harness, job.metadata.id))
    assert "the node died at step line 1" in job.status.task_statuses[0].message


def test_without_retries_a_dead_node_fails_the_job(harness: Harness) -> None:
    harness.cloud.modelarts.add_job_fault(node_fault="dies", after_seconds=0.2)
    job = _run(harness, _body(harness, "fragile", {}))
    assert job.status.phase == "Failed"
    (only,) = job.status.running_records
    assert only.end_related_task == "worker-0" and not only.end_recover


@pytest.mark.parametrize(
    ("unconditional", "phase", "runs"), [("false", "Failed", 1), ("true", "Failed", 4)]
)
def test_a_script_error_restarts_only_with_unconditional_retry(
    harness: Harness, unconditional: str, phase: str, runs: int
) -> None:
    annotations = {
        "fault-tolerance/job-retry-num": "8",
        "fault-tolerance/job-unconditional-retry": unconditional,
    }
    job = _run(harness, _body(harness, "own-error", annotations, EXIT_CODE="3"))
    assert job.status.phase == phase
    records = job.status.running_records
    # At most three unconditional restarts in a row, as documented, though 8 were allowed.
    assert len(records) == runs
    assert all(r.recover_records[0].fault_scenario == "job_failed" for r in records)


def test_an_emulator_error_fails_the_job_and_its_run_stays_on_record(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An error of the emulator's own mid-run (here OBS refusing the outputs' upload) fails the
    job: the run under way is still in ``running_records``, ended, and the error is in the
    events and the log (the run was once dropped: saved only at a restart or the end)."""

    def refused(source: Any, uri: Any) -> int:
        raise RuntimeError("OBS refused the upload")

    monkeypatch.setattr(harness.cloud.modelarts.backend.storage, "upload_tree", refused)
    job = _run(harness, _body(harness, "unlucky", {"fault-tolerance/job-retry-num": "2"}))
    assert job.status.phase == "Failed"
    (only,) = job.status.running_records
    assert only.start_at <= only.end_at and not only.end_recover
    assert "the job failed: OBS refused the upload" in _events(harness, job.metadata.id)
    assert "the job failed: OBS refused the upload" in _log(harness, job.metadata.id)
    (status,) = job.status.task_statuses
    assert status.message == "the job failed: OBS refused the upload"


def test_a_hang_is_detected_and_the_processes_restart_in_place(harness: Harness) -> None:
    harness.cloud.modelarts.add_job_fault(node_fault="hangs", at_step=2, hang_window=0.6)
    annotations = {"fault-tolerance/job-retry-num": "1", "fault-tolerance/hang-retry": "true"}
    job = _run(harness, _body(harness, "stuck", annotations))
    assert job.status.phase == "Completed"
    first, second = job.status.running_records
    assert (first.end_recover, second.start_type) == ("proc_restart", "restarted")
    assert first.recover_records[0].fault_scenario == "job_hanged"
    # In the same container: the checkpoint is there without a download.
    log = _log(harness, job.metadata.id)
    resumed = [line for line in log.splitlines() if line.startswith("resumed from")]
    assert resumed[0] == "resumed from 0" and len(resumed) == 2
    assert int(resumed[1].split()[-1]) >= 2


def test_without_hang_retry_a_hang_is_reported_and_the_job_runs_on(harness: Harness) -> None:
    harness.cloud.modelarts.add_job_fault(node_fault="hangs", at_step=1, hang_window=0.4)
    harness.upload_job(script=RESUMING)
    # Steps enough that the node is frozen long before it could end (it is stopped below).
    body = _body(harness, "frozen", {"fault-tolerance/job-retry-num": "1"}, STEPS="100")
    job_id = harness.client.create_training_job(CreateTrainingJobRequest(body=body)).metadata.id
    harness.wait(job_id, ("Running",))
    wait_until(
        lambda: any("worker-0 may be hung" in m for m in _events(harness, job_id)),
        lambda: f"no hang reported: {_events(harness, job_id)}",
        timeout=30,
    )
    assert harness.wait(job_id, ("Running",)).status.phase == "Running"
    harness.client.stop_training_job(
        StopTrainingJobRequest(training_job_id=job_id, body={"action_type": "terminate"})
    )
    assert harness.wait(job_id).status.phase == "Terminated"


@pytest.mark.parametrize(
    ("key", "value"),
    [
        ("fault-tolerance/job-retry-num", "0"),
        ("fault-tolerance/job-retry-num", "129"),
        ("fault-tolerance/job-retry-num", "three"),
        ("fault-tolerance/hang-retry", "yes"),
    ],
)
def test_an_annotation_the_service_would_refuse_is_refused(
    harness: Harness, key: str, value: str
) -> None:
    harness.upload_job(script=RESUMING)
    with pytest.raises(ClientRequestException) as refused:
        harness.client.create_training_job(
            CreateTrainingJobRequest(body=_body(harness, "bad", {key: value}))
        )
    assert refused.value.status_code == 400
    assert key in refused.value.error_msg


def test_node_faults_go_over_the_control_plane_too(harness: Harness) -> None:
    """A daemon's client (another process) injects the same faults as JSON; a bad one is a 400
    that says why."""

    def post(body: dict[str, Any]) -> Any:
        request = urllib.request.Request(
            f"{harness.cloud.endpoints.modelarts}/_majob/job-faults",
            data=json.dumps(body).encode(),
            method="POST",
        )
        with urllib.request.urlopen(request, timeout=10) as answer:
            return json.loads(answer.read())

    added = post({"node_fault": "dies", "at_step": 1, "runs": None, "step_pattern": "^step"})
    assert (added["node_fault"], added["runs"]) == ("dies", None)
    job = _run(harness, _body(harness, "remote", {"fault-tolerance/job-retry-num": "1"}))
    assert job.status.phase == "Failed" and len(job.status.running_records) == 2
    with pytest.raises(urllib.error.HTTPError) as bad:
        post({"node_fault": "dies"})
    assert bad.value.code == 400
    assert "at_step or after_seconds" in bad.value.read().decode()
    bad.value.close()

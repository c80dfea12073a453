"""Jobs really run in the fake ModelArts: phases from exit codes, terminate, restarts, faults."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from huaweicloudsdkcore.exceptions.exceptions import ClientRequestException, ServerResponseException
from huaweicloudsdkmodelarts.v1.model import (
    CreateTrainingJobRequest,
    ListTrainingJobEventsRequest,
    ListTrainingJobsRequest,
    StopTrainingJobRequest,
)

from majob.emulator.cloud import EmulatedCloud
from majob.testing import wait_until
from tests.e2e.emulator.conftest import Harness, client_for, wait_phase

SLEEPER = """\
import os, sys, time
print(f"started {os.getpid()}", flush=True)
time.sleep(120)
"""


def create(harness: Harness, body: dict[str, object]) -> str:
    job_id: str = harness.client.create_training_job(
        CreateTrainingJobRequest(body=body)
    ).metadata.id
    return job_id


def preview(harness: Harness, job_id: str, task: str = "worker-0") -> str:
    return harness.log(job_id, task)


def events(harness: Harness, job_id: str) -> list[str]:
    answer = harness.client.list_training_job_events(
        ListTrainingJobEventsRequest(training_job_id=job_id)
    )
    return [e.message for e in answer.events]


def wait_for_log(harness: Harness, job_id: str, text: str, task: str = "worker-0") -> str:
    content = ""

    def shown() -> str:
        nonlocal content
        content = preview(harness, job_id, task)
        return content if text in content else ""

    return wait_until(shown, lambda: f"{text!r} in the log:\n{content}", interval=0.02)


def pids_in(log: str) -> list[int]:
    return [int(line.split()[1]) for line in log.splitlines() if line.startswith("started ")]


def gone(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    # A zombie (not yet reaped) no longer runs anything.
    state = Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0]
    return state == "Z"


def test_a_failing_script_fails_the_job_with_its_exit_code(harness: Harness) -> None:
    harness.upload_job()
    body = harness.body("fails", environments={"EXIT_CODE": "3"})
    job = harness.wait(create(harness, body))
    assert job.status.phase == "Failed"
    assert [(t.task, t.exit_code) for t in job.status.task_statuses] == [("worker-0", 3)]
    assert "worker-0 exited with code 3; the job failed" in events(harness, job.metadata.id)
    assert "training end with exit code 3" in preview(harness, job.metadata.id)


def test_two_nodes_get_the_platform_arguments(harness: Harness) -> None:
    script = "import sys, os\nprint('args', os.environ['VC_TASK_INDEX'], ' '.join(sys.argv[1:]))\n"
    harness.put("jobs/two/code/train.py", script)
    body = harness.body(
        "two-nodes", "jobs/two", inputs=[], outputs=[],
        resource={"flavor_id": "modelarts.p3.large.public", "node_count": 2},
    )  # fmt: skip
    job = harness.wait(create(harness, body))
    assert job.status.phase == "Completed" and job.status.tasks == ["worker-0", "worker-1"]
    for index in (0, 1):
        line = next(
            line
            for line in preview(harness, job.metadata.id, f"worker-{index}").splitlines()
            if line.startswith("args")
        )
        assert f"--rank={index}" in line and "--world_size=2" in line
        assert "--init_method=tcp://127.0.0.1:" in line and "--epochs=1" in line


def test_an_ascend_job_runs_on_the_cpu_stand_in_with_the_local_stage_notices(
    harness: Harness,
) -> None:
    script = "import os\nprint('path', os.environ['PYTHONPATH'], os.environ['MA_NUM_GPUS'])\n"
    harness.put("jobs/npu/code/train.py", script)
    body = harness.body(
        "on-ascend", "jobs/npu", inputs=[], outputs=[],
        engine={"engine_name": "Ascend-Powered-Engine",
                "engine_version": "pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64"},
        resource={"flavor_id": "modelarts.bm.snt9.xlarge.8", "node_count": 1},
    )  # fmt: skip
    job = harness.wait(create(harness, body))
    assert job.status.phase == "Completed"
    log = preview(harness, job.metadata.id)
    assert "[majob] Ascend job on a host without torch_npu" in log
    assert "npu_standin" in log and log.rstrip().endswith("training end with exit code 0")
    assert " 8\n" in log  # MA_NUM_GPUS: the flavor's 8 NPUs
    assert any(m.startswith("majob: not verified on CPU") for m in events(harness, job.metadata.id))


def test_terminate_stops_the_processes(harness: Harness) -> None:
    harness.upload_job(script=SLEEPER)
    job_id = create(harness, harness.body("stop-me", inputs=[], outputs=[]))
    pid = pids_in(wait_for_log(harness, job_id, "started "))[0]
    answer = harness.client.stop_training_job(
        StopTrainingJobRequest(training_job_id=job_id, body={"action_type": "terminate"})
    )
    assert answer.status.phase == "Terminating"
    job = harness.wait(job_id)
    assert job.status.phase == "Terminated"
    assert gone(pid)
    assert "the job was terminated" in events(harness, job_id)


def test_a_job_running_when_the_emulator_stops_is_abnormal_after_a_restart(
    tmp_path: Path,
) -> None:
    state = tmp_path / "state"
    with EmulatedCloud(state) as cloud:
        harness = Harness(cloud)
        harness.upload_job(script=SLEEPER)
        job_id = create(harness, harness.body("survives", inputs=[], outputs=[]))
        pid = pids_in(wait_for_log(harness, job_id, "started "))[0]
    assert gone(pid)
    with EmulatedCloud(state) as cloud:
        client = client_for(cloud.endpoints)
        job = wait_phase(client, job_id, ("Abnormal",))
        assert job.status.secondary_phase == "Lost"
        messages = [
            e.message
            for e in client.list_training_job_events(
                ListTrainingJobEventsRequest(training_job_id=job_id)
            ).events
        ]
        assert any("the emulator stopped while the job was" in m for m in messages)
        # The code and the data in the fake OBS survived too.
        assert Harness(cloud).read("jobs/a/code/train.py") == SLEEPER.encode()


def test_a_job_left_running_by_a_killed_emulator_is_abnormal(tmp_path: Path) -> None:
    """The crash case: nothing was stopped cleanly; opening the state finds the job active."""
    from majob.emulator.modelarts.models import ModelArtsBackend
    from majob.emulator.modelarts.store import JobRecord, JobStore

    store = JobStore(tmp_path)
    store.insert(
        JobRecord("j-1", "crashed", "", "Running", "Running", 1, 2, None, {"spec": {}}, pids=[])
    )
    store.close()
    backend = ModelArtsBackend(tmp_path, storage=None)
    try:
        assert backend.recovered == ["j-1"]
        assert backend.show("j-1")["status"]["phase"] == "Abnormal"
    finally:
        backend.close()


def _session_leader() -> subprocess.Popen[bytes]:
    """A process leading its own group, as an emulated job's node does."""
    return subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(120)"], start_new_session=True
    )


def test_recovery_kills_only_the_processes_its_records_still_name(tmp_path: Path) -> None:
    """A crashed emulator's rows name its nodes; by the next start those pids may belong to
    other processes. Only a process that started when the row says is killed."""
    from majob.emulator.modelarts.models import ModelArtsBackend
    from majob.emulator.modelarts.store import JobRecord, JobStore
    from majob.processes import ProcessRef

    ours, stranger, unverifiable = _session_leader(), _session_leader(), _session_leader()
    try:
        store = JobStore(tmp_path)
        rows = {
            "ours": [ProcessRef.of(ours.pid)],
            "pid-reused": [ProcessRef(stranger.pid, "another start time")],
            "old-row": [ProcessRef(unverifiable.pid)],  # written before start times were kept
        }
        for name, pids in rows.items():
            store.insert(
                JobRecord(name, name, "", "Running", "Running", 1, 2, None, {"spec": {}}, pids=pids)
            )
        store.close()
        backend = ModelArtsBackend(tmp_path, storage=None)
        backend.close()
        assert ours.wait(timeout=30) == -signal.SIGKILL
        assert stranger.poll() is None and unverifiable.poll() is None
    finally:
        for process in (ours, stranger, unverifiable):
            process.kill()
            process.wait()


def test_503_then_success_and_a_dropped_connection(harness: Harness) -> None:
    harness.upload_job()
    harness.cloud.modelarts.add_fault(status=503, method="POST", path="training-jobs$", count=1)
    with pytest.raises(ServerResponseException) as caught:
        create(harness, harness.body("after-503"))
    assert caught.value.status_code == 503 and caught.value.error_code == "ModelArts.0106"
    assert harness.client.list_training_jobs(ListTrainingJobsRequest(body={})).total == 0
    job_id = create(harness, harness.body("after-503"))  # the rule is spent
    assert harness.wait(job_id).status.phase == "Completed"
    harness.cloud.modelarts.add_fault(reset=True, method="POST", path="searches$", count=1)
    with pytest.raises(Exception) as dropped:
        harness.client.list_training_jobs(ListTrainingJobsRequest(body={}))
    assert not isinstance(dropped.value, (ClientRequestException, ServerResponseException))
    assert harness.client.list_training_jobs(ListTrainingJobsRequest(body={})).total == 1
    statuses = [
        (c.path.rsplit("/", 1)[-1], c.status, c.fault)
        for c in harness.cloud.modelarts.log.entries()
    ]
    assert ("training-jobs", 503, "status:503") in statuses
    assert ("training-job-searches", 0, "reset") in statuses


def test_429_carries_the_throttling_code(harness: Harness) -> None:
    harness.cloud.modelarts.add_fault(status=429, count=1)
    with pytest.raises(ClientRequestException) as caught:
        harness.client.list_training_jobs(ListTrainingJobsRequest(body={}))
    assert caught.value.status_code == 429 and caught.value.error_code == "ModelArts.0105"


@pytest.mark.parametrize(
    ("phase", "secondary"),
    [("Creating", "CreateFailed"), ("Pending", "Failed"), ("Running", "Failed")],
)
def test_a_job_fault_fails_the_job_at_a_phase(harness: Harness, phase: str, secondary: str) -> None:
    harness.upload_job()
    harness.cloud.modelarts.add_job_fault(fail_at=phase, count=1)
    job = harness.wait(create(harness, harness.body("doomed")))
    assert (job.status.phase, job.status.secondary_phase) == ("Failed", secondary)
    assert any(m.startswith("injected fault") for m in events(harness, job.metadata.id))


def test_a_slow_phase_can_be_terminated_while_it_waits(harness: Harness) -> None:
    harness.upload_job()
    harness.cloud.modelarts.add_job_fault(name="^slow", delays={"Pending": 300})
    job_id = create(harness, harness.body("slow-queue"))
    harness.wait(job_id, ("Pending",))
    harness.client.stop_training_job(
        StopTrainingJobRequest(training_job_id=job_id, body={"action_type": "terminate"})
    )
    assert harness.wait(job_id).status.phase == "Terminated"


def test_an_input_without_data_fails_the_job_with_an_event(harness: Harness) -> None:
    harness.put("jobs/a/code/train.py", "print('never')\n")
    job = harness.wait(create(harness, harness.body("no-data")))
    assert job.status.phase == "Failed"
    assert any(
        "input data_url: no data at /majob-demo/jobs/a/data/" in m
        for m in events(harness, job.metadata.id)
    )


def test_outputs_are_uploaded_while_the_job_runs(harness: Harness) -> None:
    script = (
        "import argparse, os, time\n"
        "p = argparse.ArgumentParser(); p.add_argument('--train_url'); a, _ = p.parse_known_args()\n"
        "open(os.path.join(a.train_url, 'checkpoint.txt'), 'w').write('epoch 1')\n"
        "print('started', os.getpid(), flush=True)\n"
        "time.sleep(120)\n"
    )
    harness.upload_job(script=script)
    job_id = create(harness, harness.body("periodic", inputs=[]))
    wait_until(
        lambda: "jobs/a/out/checkpoint.txt" in harness.keys("jobs/a/out/"),
        "the periodic upload of the checkpoint",
        interval=0.02,
    )
    assert harness.wait(job_id, ("Running",)).status.phase == "Running"
    harness.client.stop_training_job(
        StopTrainingJobRequest(training_job_id=job_id, body={"action_type": "terminate"})
    )
    harness.wait(job_id)


# Writes and removes temporary files in its output as fast as it can, for a while: each periodic
# upload (every 0.2s here) lists files that are gone by the time it reads them.
CHURN = """\
import argparse, os, time
p = argparse.ArgumentParser(); p.add_argument("--train_url"); a, _ = p.parse_known_args()
end = time.monotonic() + 1.5
while time.monotonic() < end:
    paths = [os.path.join(a.train_url, f"ckpt-{i}.tmp") for i in range(200)]
    for path in paths:
        open(path, "w").write("x")
    for path in paths:
        os.replace(path, os.path.join(a.train_url, "ckpt.txt"))
print("done", flush=True)
"""


def test_a_periodic_upload_skips_the_files_the_job_removes_meanwhile(harness: Harness) -> None:
    """A temporary file renamed between the upload's listing and its read once failed the job
    ("the job failed: [Errno 2] No such file or directory: .../ckpt.txt.tmp"), with no
    running record."""
    harness.upload_job(script=CHURN)
    job = harness.wait(create(harness, harness.body("churn", inputs=[])))
    assert job.status.phase == "Completed", events(harness, job.metadata.id)
    assert harness.read("jobs/a/out/ckpt.txt") == b"x"

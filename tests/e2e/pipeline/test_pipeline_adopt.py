"""A pipeline killed with ``kill -9`` during its debug job: the re-run adopts that job (follows
it, or judges it if it ended) and submits no second one; a job left for other code is refused
in the words of what happened. The debug job's script waits for a file the test writes, so the
test, not the clock, decides when (and how) the job ends."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord
from majob.service.base import JobFilter
from majob.service.connect import open_service
from majob.spec.profiles import Profile
from majob.testing import wait_until

from .conftest import DEADLINE, SPEC, start_majob

# Logs a loss, then (debug only: it has --release) waits until the file appears; "fail" in it
# fails the job. No torch: the job starts at once.
SCRIPT = """\
import argparse, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--release", default="")
args, _ = parser.parse_known_args()
print("epoch 0 loss=0.5", flush=True)
while args.release and not os.path.exists(args.release):
    time.sleep(0.05)
if args.release and open(args.release).read().strip() == "fail":
    print("told to fail", flush=True)
    sys.exit(3)
with open(os.path.join(args.train_url, "model.pth"), "w") as out:
    out.write("0.5")
print("done", flush=True)
"""


def pipeline() -> subprocess.Popen[str]:
    return start_majob("pipeline", "tiny.yaml", "--profile", "emulator", "--upload-inputs")


@pytest.fixture
def release(project: Path) -> Path:
    """The file the debug job waits for; the project's spec passes it to the debug stage."""
    path = project / "release"
    (project / "code" / "train.py").write_text(SCRIPT)
    spec = SPEC.format(name="tiny").replace(
        "stages:\n  debug: {hyperparameters: {epochs: 1}}",
        f"stages:\n  debug: {{hyperparameters: {{release: '{path}'}}}}",
    )
    (project / "tiny.yaml").write_text(spec)
    return path


def debug_records() -> list[StageRecord]:
    with Ledger() as ledger:
        return ledger.records("tiny", stage="debug")


def debug_jobs(profile: Profile) -> list[tuple[str, str]]:
    with open_service(profile) as service:
        jobs, _ = service.search(JobFilter(name="tiny-debug"))
    return sorted((job.id, job.phase) for job in jobs)


def killed_while_debug_runs(profile: Profile) -> StageRecord:
    """Start the pipeline, SIGKILL its process group once its debug job runs; the record."""
    first = pipeline()
    try:

        def running() -> StageRecord | None:
            records = debug_records()
            if not records or not records[0].job_id:
                return None
            with open_service(profile) as service:
                phase = service.get(records[0].job_id).phase
            return records[0] if phase == "Running" else None

        record = wait_until(running, "the debug job to run", timeout=DEADLINE)
        os.killpg(first.pid, signal.SIGKILL)  # no cleanup runs, as with a closed laptop
    finally:
        first.kill()
        first.communicate(timeout=DEADLINE)
    assert debug_records()[0].effective_result == "interrupted"
    return record


def ended(profile: Profile, job_id: str, phase: str) -> None:
    """Wait until the job is in ``phase`` (Running, or the phase it ended in)."""

    def seen() -> bool:
        with open_service(profile) as service:
            return service.get(job_id).phase == phase

    wait_until(seen, f"job {job_id} to be {phase}", timeout=DEADLINE)


@pytest.mark.slow
@pytest.mark.parametrize("case", ["still-running", "completed", "failed"])
def test_a_rerun_after_kill_9_adopts_the_debug_job_and_submits_no_second(
    project: Path, release: Path, cloud: EmulatedCloud, profile: Profile, case: str
) -> None:
    left = killed_while_debug_runs(profile)
    if case != "still-running":  # the job ends while no pipeline runs
        release.write_text("fail" if case == "failed" else "ok")
        ended(profile, left.job_id, "Failed" if case == "failed" else "Completed")
    again = pipeline()
    if case == "still-running":  # followed live: adopted while the job still waits
        wait_until(lambda: debug_records()[0].adopted_at, "the re-run to adopt", timeout=DEADLINE)
        assert debug_records()[0].effective_result == "running"
        release.write_text("ok")
    output, _ = again.communicate(timeout=DEADLINE)
    lines = output.splitlines()

    assert [job_id for job_id, _ in debug_jobs(profile)] == [left.job_id], output  # one job
    (debug,) = debug_records()  # the killed run's record, taken over: no second one
    assert debug.id == left.id and debug.job_id == left.job_id and debug.adopted_at
    if case == "failed":
        assert again.returncode == 1, output
        assert debug.result == "failed"
        assert "exit code 3" in debug.reason and "told to fail" in debug.reason, debug.reason
        assert lines[-1].startswith("[majob] pipeline stopped: the debug stage failed: "), output
        return
    assert again.returncode == 0, output
    verb = "following" if case == "still-running" else "judging"
    assert any(line.startswith(f"[majob] {verb} job {left.job_id} (tiny-debug)") for line in lines)
    assert debug.result == "passed" and debug.metrics["worker-0"]["loss"] == [0.5]
    assert any(output.endswith("model.pth") for output in debug.outputs), debug.outputs
    assert lines[-1] == "[majob] pipeline passed: debug and formal (local passed before)"
    history = subprocess.run(
        [sys.executable, "-m", "majob", "history", "tiny.yaml", "--format", "json"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "interrupted" not in history.stdout
    shown = {row["id"]: row for row in json.loads(history.stdout)}
    assert shown[debug.id]["result"] == "passed"
    assert shown[debug.id]["adopted_at"] == debug.adopted_at


@pytest.mark.slow
def test_a_job_left_running_for_other_code_is_refused_saying_so_and_recorded_as_refused(
    project: Path, release: Path, cloud: EmulatedCloud, profile: Profile
) -> None:
    left = killed_while_debug_runs(profile)
    script = project / "code" / "train.py"
    script.write_text(script.read_text() + "# changed\n")
    again = pipeline()
    output, _ = again.communicate(timeout=DEADLINE)
    assert again.returncode == 2, output
    assert (
        f"error: debug refused for tiny: job {left.job_id} (tiny-debug), which the interrupted "
        f"run of ledger record #{left.id} submitted, is still Running and does not match this "
        "run (changed since: code: train.py (changed))"
    ) in output
    assert f"hint: stop it (majob stop {left.job_id}) and run again" in output
    refused, kept = debug_records()
    assert refused.result == "refused" and "does not match this run" in refused.reason
    assert kept.id == left.id and kept.effective_result == "interrupted"  # not this run's job
    assert [job_id for job_id, _ in debug_jobs(profile)] == [left.job_id]
    history = subprocess.run(
        [sys.executable, "-m", "majob", "history", "tiny.yaml"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert (
        f"#{refused.id} debug refused: debug refused for tiny: job {left.job_id}" in history.stdout
    )
    release.write_text("ok")  # let the job end, so the emulator stops with nothing running
    ended(profile, left.job_id, "Completed")


@pytest.mark.slow
def test_submit_wait_killed_and_run_again_follows_its_job_and_records_it_once(
    project: Path, release: Path, cloud: EmulatedCloud, profile: Profile
) -> None:
    submit = ("submit", "tiny.yaml", "--stage", "debug", "--wait", "--profile", "emulator")
    first = start_majob(*submit, "--upload-inputs")
    try:
        wait_until(
            lambda: debug_records() and debug_records()[0].job_id, "the record", timeout=DEADLINE
        )
        (left,) = debug_records()
        ended(profile, left.job_id, "Running")  # the job waits for the release file
        os.killpg(first.pid, signal.SIGKILL)
    finally:
        first.kill()
        first.communicate(timeout=DEADLINE)
    again = start_majob(*submit)
    wait_until(lambda: debug_records()[0].adopted_at, "the re-run to adopt", timeout=DEADLINE)
    release.write_text("ok")
    output, _ = again.communicate(timeout=DEADLINE)
    assert again.returncode == 0, output
    assert f"adopted job {left.job_id} (tiny-debug), left by the last run: " in output
    assert "submitted job" not in output
    assert [job_id for job_id, _ in debug_jobs(profile)] == [left.job_id]
    (debug,) = debug_records()
    assert debug.id == left.id and debug.passed and debug.metrics["worker-0"]["loss"] == [0.5]

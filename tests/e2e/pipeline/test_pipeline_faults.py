"""Faults: the pipeline killed during a cloud stage, two pipelines on one ledger at once."""

from __future__ import annotations

import signal
import threading
from pathlib import Path

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.service.base import JobFilter
from majob.service.connect import open_service
from majob.spec.profiles import Profile

from .conftest import DEADLINE, start_majob, write_spec


@pytest.mark.slow
@pytest.mark.parametrize("signum", [signal.SIGKILL, signal.SIGTERM], ids=["kill-9", "sigterm"])
def test_killed_during_debug_the_ledger_is_readable_and_the_rerun_follows_the_job(
    project: Path, cloud: EmulatedCloud, profile: Profile, signum: signal.Signals
) -> None:
    process = start_majob(
        "pipeline", "tiny.yaml", "--profile", "emulator", "--upload-inputs",
        "--set", "stages.debug.hyperparameters.sleep=3",
    )  # fmt: skip
    seen: list[str] = []
    running = threading.Event()

    def read() -> None:
        assert process.stdout is not None
        for line in process.stdout:
            seen.append(line)
            submitted = any("(tiny-debug) submitted" in earlier for earlier in seen)
            if submitted and line.startswith("[worker-0] epoch 0"):  # the debug job runs
                running.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert running.wait(DEADLINE), "".join(seen)
        process.send_signal(signum)
        process.wait(DEADLINE)
    finally:
        process.kill()
        reader.join(DEADLINE)
        assert process.stdout is not None
        process.stdout.close()

    with Ledger() as ledger:
        debug, local = ledger.records("tiny")
    assert local.stage == "local" and local.passed
    assert debug.stage == "debug" and debug.effective_result == "interrupted"
    assert debug.job_id
    if signum == signal.SIGTERM:  # stopped as Ctrl-C stops it: it finished its record
        assert process.returncode == 130, "".join(seen)
        assert debug.result == "interrupted"

    again = start_majob("pipeline", "tiny.yaml", "--profile", "emulator", "--set",
                  "stages.debug.hyperparameters.sleep=3")  # fmt: skip
    output, _ = again.communicate(timeout=DEADLINE)
    assert again.returncode == 0, output
    lines = output.splitlines()
    assert lines[0].startswith("[majob] local: skipped, passed for this code and spec")
    # Followed if it still ran, judged if it ended meanwhile (test_pipeline_adopt.py has both).
    adopted = (f"[majob] following job {debug.job_id} ", f"[majob] judging job {debug.job_id} ")
    assert any(line.startswith(adopted) for line in lines), output
    assert lines[-1] == "[majob] pipeline passed: debug and formal (local passed before)"
    with open_service(profile) as service:
        jobs, _ = service.search(JobFilter(name="tiny-debug"))
    assert [job.id for job in jobs if job.name == "tiny-debug"] == [debug.job_id]  # one job
    with Ledger() as ledger:
        latest = ledger.records("tiny", stage="debug")[0]
    assert latest.passed and latest.job_id == debug.job_id


@pytest.mark.slow
def test_two_pipelines_at_once_on_one_ledger_lose_nothing(
    project: Path, cloud: EmulatedCloud
) -> None:
    write_spec(project, "other")
    args = ("--profile", "emulator", "--upload-inputs", "--until", "debug")
    processes = [start_majob("pipeline", f"{name}.yaml", *args) for name in ("tiny", "other")]
    for process in processes:
        output, _ = process.communicate(timeout=DEADLINE)
        assert process.returncode == 0, output
    with Ledger() as ledger:
        records = ledger.records()
    assert sorted((r.spec_name, r.stage, r.result) for r in records) == [
        ("other", "debug", "passed"),
        ("other", "local", "passed"),
        ("tiny", "debug", "passed"),
        ("tiny", "local", "passed"),
    ]
    assert all(r.metrics["worker-0"]["loss"] for r in records)

"""Restarts seen from the client: ``majob submit --wait`` says each restart as it happens and,
when the retries run out, how many there were and why; ``majob status`` shows the history; a
follower is told of a hang the service only warns of.
Against the emulated cloud, through the real ModelArts client."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

import majob
from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.service import watch
from majob.service.logs import Event

runner = CliRunner()
RESILIENT = "fault_tolerance: {retries: 2, checkpoints: train_url/ckpt/}\n"


def _submit(project: Path, block: str = RESILIENT) -> tuple[int, str]:
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text() + block)
    result = runner.invoke(
        app, ["submit", str(spec), "--profile", "emulator", "--upload-inputs", "--wait"]
    )
    return result.exit_code, result.output


def _job_id(output: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith("submitted job "))
    return line.split()[2]


def test_submit_wait_shows_a_restart_and_status_its_history(
    project: Path, cloud: EmulatedCloud
) -> None:
    cloud.modelarts.add_job_fault(name="^tiny", node_fault="dies", at_step=2)
    code, output = _submit(project)
    assert code == 0, output
    assert (
        "restart 1: worker-0 (node_fault): injected fault: the node died at step line 2 "
        "-> job_reschedule" in output
    )
    assert output.count("restart 1:") == 1  # said once, however many polls saw it
    with Ledger() as ledger:  # the stage's record keeps the restart
        record = ledger.by_job(_job_id(output))
    assert record is not None and record.passed
    (restart,) = record.restarts
    assert (restart["task"], restart["scenario"], restart["recover"]) == (
        "worker-0",
        "node_fault",
        "job_reschedule",
    )
    status = runner.invoke(app, ["status", _job_id(output), "--profile", "emulator"])
    assert status.exit_code == 0, status.output
    assert "fault tolerance: 1 restart" in status.output
    assert "worker-0 (node_fault): injected fault: the node died at step line 2" in status.output


def test_retries_exhausted_say_how_many_restarts_and_why(
    project: Path, cloud: EmulatedCloud
) -> None:
    cloud.modelarts.add_job_fault(name="^tiny", node_fault="dies", at_step=1, runs=None)
    code, output = _submit(project)
    assert code == 1, output
    assert "ended Failed" in output
    died = "worker-0 (node_fault): injected fault: the node died at step line 1"
    assert f"error: 2 restarts: {died} -> job_reschedule; {died} -> job_reschedule" in output
    assert f"error: then {died} -> no restart left" in output


def test_without_fault_tolerance_a_dead_node_fails_the_job_at_once(
    project: Path, cloud: EmulatedCloud
) -> None:
    cloud.modelarts.add_job_fault(name="^tiny", node_fault="dies", at_step=1)
    code, output = _submit(project, block="")
    assert code == 1, output
    assert "restart" not in output.replace("no restart left", "")
    assert "error: the run ended: worker-0 (node_fault): injected fault" in output


def test_a_dry_run_shows_the_annotations_and_the_predownloaded_output(
    project: Path, cloud: EmulatedCloud
) -> None:
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text() + RESILIENT.replace("2,", "2, hang: true,"))
    result = runner.invoke(app, ["submit", str(spec), "--profile", "emulator", "--dry-run"])
    assert result.exit_code == 0, result.output
    assert '"fault-tolerance/job-retry-num": "2"' in result.output
    assert '"fault-tolerance/hang-retry": "true"' in result.output
    assert '"prefetch_to_local": true' in result.output


def test_restart_on_any_restarts_a_failing_script_and_says_so(
    project: Path, cloud: EmulatedCloud
) -> None:
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text() + "fault_tolerance: {retries: 1, restart_on: any}\n")
    result = runner.invoke(
        app,
        [
            "submit",
            str(spec),
            "--profile",
            "emulator",
            "--upload-inputs",
            "--wait",
            "--set",
            "hyperparameters.fail=3",
        ],
    )
    assert result.exit_code == 1, result.output
    failed = "worker-0 (job_failed): worker-0 exited with code 3"
    assert f"restart 1: {failed} -> job_reschedule" in result.output
    assert f"error: 1 restart: {failed} -> job_reschedule" in result.output
    assert f"error: then {failed} -> no restart left" in result.output
    assert "error: task worker-0 exited with code 3" in result.output


def test_a_hang_without_hang_retry_is_said_while_the_job_is_followed(
    project: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The service only warns of a hang it may not restart (no hang: true): a follower that
    # showed nothing would leave a frozen job spending its flavor's hours unseen.
    monkeypatch.setattr(watch, "EVENT_PERIOD", 0.2)
    cloud.modelarts.add_job_fault(name="^tiny", node_fault="hangs", at_step=1, hang_window=0.4)
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text() + RESILIENT)
    # It sleeps after its steps: frozen then, whenever the freeze lands, it cannot end first.
    job = majob.submit(
        spec, profile="emulator", upload_inputs=True, overrides=["hyperparameters.sleep=60"]
    )
    seen: list[str] = []

    def on_event(event: Event) -> None:
        seen.append(f"{event.level}: {event.message}")
        job.stop()  # seen: end the frozen job, as its owner would

    waited = job.wait(timeout=60, on_event=on_event)
    assert waited.job.phase == "Terminated", seen
    assert len(seen) == 1 and seen[0].startswith("Warning: worker-0 may be hung: "), seen
    status = runner.invoke(app, ["status", job.id, "--profile", "emulator"])
    assert "worker-0 may be hung" in status.output  # the newest events, not the first 100

"""What a job's processes used, as the (emulated) service measured it: ``majob status
--metrics``, ``job.usage()`` and ``job.metrics(usage=True)`` beside the log metrics."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

import majob
from majob.cli.app import app
from majob.spec.profiles import Profile

runner = CliRunner()


def submitted_and_done(project: Path, profile: Profile) -> majob.Job:
    # The job runs for a second or so: long enough for the emulator to measure it twice.
    job = majob.submit(
        project / "spec.yaml",
        profile=profile,
        upload_inputs=True,
        overrides=["hyperparameters.sleep=1.2"],
    )
    assert job.wait(timeout=120).job.succeeded
    return job


def test_status_metrics_shows_each_task_cpu_and_memory(project: Path, profile: Profile) -> None:
    job = submitted_and_done(project, profile)
    job.service.close()  # type: ignore[union-attr]
    plain = runner.invoke(app, ["status", job.id, "--profile", "emulator"])
    assert plain.exit_code == 0, plain.output
    assert "metrics worker-0" not in plain.output
    shown = runner.invoke(app, ["status", job.id, "--metrics", "--profile", "emulator"])
    assert shown.exit_code == 0, shown.output
    [line] = [line for line in shown.output.splitlines() if "metrics worker-0:" in line]
    assert "cpuUsage " in line and "memUsage " in line and line.endswith("%")
    assert "gpuUtil" not in line  # never measured on a CPU flavor: left out


def test_job_usage_and_metrics_with_usage(project: Path, profile: Profile) -> None:
    job = submitted_and_done(project, profile)
    try:
        usage = job.usage()
        assert list(usage) == ["worker-0"]
        measured = usage["worker-0"]
        assert measured["memUsage"] and all(0 < v <= 100 for v in measured["memUsage"])
        assert measured["gpuUtil"] == [-1.0] * len(measured["memUsage"])
        frame = job.metrics({"step": r"step (\d+)"}, usage=True)
        assert set(frame.metric) == {"step", "cpuUsage", "memUsage"}
        assert frame[frame.metric == "step"].value.tolist() == [0.0, 1.0, 2.0]
    finally:
        job.service.close()  # type: ignore[union-attr]

"""A sweep whose process dies: ``resume`` follows the trials it left running and submits only
the trials never submitted; ``stop`` stops the jobs it left running."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.sweep import store
from majob.sweep.control import sweeps_file
from majob.sweep.run import Sweep, resume
from majob.sweep.unfinished import left_unfinished
from majob.testing import wait_until

from .conftest import write_spec
from .helpers import jobs_on_cloud

# Each trial runs until the test writes ./release: the sweep is caught with two trials running
# and two not yet asked, however loaded the machine.
SLOW = "stages:\n  debug: {{hyperparameters: {{epochs: 2, release: '{release}'}}}}\n"

pytestmark = pytest.mark.slow  # a second majob process


def _started_and_killed(project: Path, how: signal.Signals = signal.SIGKILL) -> str:
    """Start ``majob sweep`` in its own process, kill it (SIGKILL: nothing is tidied) or
    interrupt it (``how``) once two trials' jobs exist; the sweep's id."""
    write_spec(project, name="slow", extra=SLOW.format(release=project / "release"))
    out = project / "sweep.out"
    with out.open("w") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "majob",
                "sweep",
                "slow.yaml",
                "--profile",
                "emulator",
                "--upload-inputs",
            ],
            stdout=sink,
            stderr=subprocess.STDOUT,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )
    try:
        wait_until(
            lambda: out.read_text().count("submitted as job") >= 2,
            lambda: f"two trials submitted; the output: {out.read_text()}",
        )
    finally:
        process.send_signal(how)
        code = process.wait()
    assert code == (-signal.SIGKILL if how == signal.SIGKILL else 130), out.read_text()
    found = re.search(r"\[majob\] sweep (slow-[0-9a-f]{6}):", out.read_text())
    assert found, out.read_text()
    return found.group(1)


def test_a_killed_sweep_resumes_without_submitting_a_trial_twice(
    project: Path, cloud: EmulatedCloud
) -> None:
    sweep_id = _started_and_killed(project)
    assert len(jobs_on_cloud()) == 2
    (project / "release").write_text("go")
    lines: list[str] = []
    result = resume(sweep_id, report=lines.append)
    assert [r.state for r in result.rows] == ["completed"] * 4, lines
    assert sum("following job" in line for line in lines) == 2
    names = sorted(job.name for job in jobs_on_cloud())
    assert names == [f"slow-t{k}-debug" for k in range(1, 5)]  # each trial once
    assert sorted(r.job_name for r in result.rows) == names


def test_the_same_sweep_command_after_a_kill_goes_on_with_the_sweep_it_left(
    project: Path, cloud: EmulatedCloud
) -> None:
    sweep_id = _started_and_killed(project)
    left = sorted(job.id for job in jobs_on_cloud())
    (project / "release").write_text("go")
    lines: list[str] = []
    result = Sweep("slow.yaml", profile="emulator", report=lines.append).run()
    assert result.info.id == sweep_id, lines
    assert (
        f"[majob] sweep {sweep_id}: left unfinished by a run that died, for this code and spec; "
        "going on with it"
    ) in lines
    assert [r.state for r in result.rows] == ["completed"] * 4, lines
    assert (
        sorted(
            line.split("following job ")[1].split()[0] for line in lines if "following job" in line
        )
        == left
    )
    names = sorted(job.name for job in jobs_on_cloud())
    assert names == [f"slow-t{k}-debug" for k in range(1, 5)]  # each trial once
    # Finished, it is not gone on with again: the next run of the command is a sweep of its own.
    path = sweeps_file()
    with store.opened(path) as storage:
        assert left_unfinished(storage, replace(result.info, id="next"), path) is None


def test_ctrl_c_leaves_the_trials_running_and_stop_stops_them(
    project: Path, cloud: EmulatedCloud
) -> None:
    sweep_id = _started_and_killed(project, signal.SIGINT)
    said = (project / "sweep.out").read_text()
    assert (
        f"go on with `majob sweep resume {sweep_id}`, or stop them with "
        f"`majob sweep stop {sweep_id}`"
    ) in said
    assert {job.phase for job in jobs_on_cloud()} <= {"Creating", "Pending", "Running"}  # held
    stopped = CliRunner().invoke(app, ["sweep", "stop", sweep_id])
    assert stopped.exit_code == 0, stopped.output
    assert stopped.stdout.startswith("stopped 2 running trial job(s): ")
    jobs = jobs_on_cloud()
    assert {job.phase for job in jobs} <= {"Terminated", "Terminating"}
    status = CliRunner().invoke(app, ["sweep", "status", sweep_id])
    assert status.exit_code == 0, status.output
    assert status.stdout.count("stopped by `majob sweep stop`") == 2

"""Trials that go wrong do not stop a sweep: a crash and a silent trial are recorded with why;
a trial in the bad region is pruned, its job stopped through the service."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.errors import MajobError, ServiceUnreachable
from majob.sweep.control import status
from majob.sweep.run import Sweep

from .conftest import write_spec
from .helpers import jobs_on_cloud

# Seed 1 draws crash, ok, quiet, quiet, crash (the test checks it did).
MIXED = """\
  space:
    mode: {choice: [ok, crash, quiet]}
  objective: {metric: loss, goal: min}
  trials: 5
  parallel: 2
  seed: 1
"""

# Seed 6 draws x = 0.3, 0.3, 5.0, 0.3: two good trials finish, then one far worse at every step.
BAD_REGION = """\
  space:
    x: {choice: [0.3, 5.0]}
  objective: {metric: loss, goal: min}
  trials: 4
  parallel: 1
  prune: median
  prune_after: 0
  seed: 6
"""


def test_crashing_and_silent_trials_are_recorded_and_the_sweep_goes_on(
    project: Path, cloud: EmulatedCloud
) -> None:
    write_spec(project, name="mixed", sweep=MIXED)
    result = Sweep(
        "mixed.yaml", profile="emulator", upload_inputs=True, report=lambda _: None
    ).run()
    by_mode = {}
    for row in result.rows:
        by_mode.setdefault(row.params["mode"], []).append(row)
    assert sorted(by_mode) == ["crash", "ok", "quiet"]  # the seed drew each
    assert {r.state for r in by_mode["ok"]} == {"completed"}
    for row in by_mode["crash"]:
        assert row.state == "failed"
        assert row.reason.startswith("job Failed"), row.reason
        assert "exit code 3" in row.reason and "boom: a bad value" in row.reason
    for row in by_mode["quiet"]:
        assert row.state == "failed"
        assert row.reason == (
            "the job completed but never reported 'loss': no log line matched metrics.loss "
            "('loss=([0-9.]+)')"
        )
    assert result.best is not None and result.best.params == {"mode": "ok"}
    assert len(jobs_on_cloud()) == 5


def test_a_trial_in_the_bad_region_is_pruned_and_its_job_stopped(
    project: Path, cloud: EmulatedCloud
) -> None:
    write_spec(
        project,
        name="pruned",
        sweep=BAD_REGION,
        # x = 5.0 never ends by itself: only the pruner's stop ends it, however loaded the machine.
        extra="stages:\n  debug: {hyperparameters: {epochs: 8, pause: 0.5, hang_above: 1.0}}\n",
    )
    lines: list[str] = []
    result = Sweep("pruned.yaml", profile="emulator", upload_inputs=True, report=lines.append).run()
    assert [r.params["x"] for r in result.rows] == [0.3, 0.3, 5.0, 0.3]
    states = [r.state for r in result.rows]
    assert states == ["completed", "completed", "pruned", "completed"], lines
    pruned = result.rows[2]
    assert pruned.reason.startswith("pruned at step "), pruned.reason
    assert pruned.reason.endswith("worse than the median); its job was stopped")
    jobs = {job.id: job for job in jobs_on_cloud()}
    assert jobs[pruned.job_id].phase == "Terminated"
    assert all(jobs[r.job_id].phase == "Completed" for r in result.rows if r.state == "completed")


def test_a_trial_the_service_refuses_stops_the_sweep_and_says_how_to_go_on(
    project: Path, cloud: EmulatedCloud
) -> None:
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        if "swept-t1-debug: submitted as job" in line:  # the next create is refused
            cloud.modelarts.add_fault(
                status=400, code="ModelArts.2701", method="POST", path=r"/training-jobs$", count=1
            )

    with pytest.raises(MajobError):
        Sweep("swept.yaml", profile="emulator", upload_inputs=True, report=report).run()
    (said,) = [line for line in lines if line.startswith("[majob] stopped: ")]
    assert said.startswith("[majob] stopped: trials left running (swept-t1-debug); go on with ")
    sweep_id = said.split("`majob sweep resume ")[1].split("`")[0]
    rows = status(sweep_id).rows
    assert [r.state for r in rows] == ["running", "failed"]
    assert rows[1].reason.startswith("not submitted: "), rows[1].reason
    assert len(jobs_on_cloud()) == 1


def test_a_service_gone_longer_than_the_patience_stops_the_sweep_not_its_jobs(
    project: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_WAIT_PATIENCE", "0")
    monkeypatch.setenv("MAJOB_MODELARTS_TIMEOUT", "1")
    lines: list[str] = []

    def report(line: str) -> None:
        lines.append(line)
        if "swept-t2-debug: submitted as job" in line:  # from here on, no answer reaches us
            cloud.modelarts.add_fault(reset=True, method="GET", path=r"/training-jobs/")

    with pytest.raises(ServiceUnreachable):
        Sweep("swept.yaml", profile="emulator", upload_inputs=True, report=report).run()
    (said,) = [line for line in lines if line.startswith("[majob] stopped: ")]
    assert "trials left running (swept-t1-debug, swept-t2-debug)" in said

"""``majob.sweep``'s loop on the emulated cloud: trials run for real as jobs."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.spec.set_checks import SetWarning
from majob.sweep.results import SweepResult
from majob.sweep.run import Sweep


def test_a_sweep_runs_its_trials_as_jobs_and_finds_the_better_region(
    project: Path, cloud: EmulatedCloud
) -> None:
    lines: list[str] = []
    result = Sweep("swept.yaml", profile="emulator", upload_inputs=True, report=lines.append).run()
    assert [r.state for r in result.rows] == ["completed"] * 4, lines
    assert sorted(r.job_name for r in result.rows) == [f"swept-t{k}-debug" for k in range(1, 5)]
    best = result.best
    assert best is not None
    # The loss is (x - 0.3)^2 + 1/2 after two epochs: the best trial is the one nearest 0.3.
    assert best.params["x"] == min((r.params["x"] for r in result.rows), key=lambda x: abs(x - 0.3))
    assert "[majob] smoke: the trial template runs locally first" in lines
    assert Sweep.status(result.info.id) == result  # the notebook's way back to a sweep


def test_the_live_table_shows_each_running_trials_phase_and_objective_so_far(
    project: Path, cloud: EmulatedCloud
) -> None:
    # Each trial is held at its end until the table has shown a running trial with an objective:
    # the test, not the clock, decides when the trials end.
    release = project / "release"
    (project / "swept.yaml").write_text(
        (project / "swept.yaml").read_text()
        + f"stages:\n  debug: {{hyperparameters: {{epochs: 4, release: '{release}'}}}}\n"
    )
    seen: list[SweepResult] = []

    def on_change(result: SweepResult) -> None:
        seen.append(result)
        if any(row.state == "running" and row.objective is not None for row in result.rows):
            release.write_text("go")

    Sweep(
        "swept.yaml",
        profile="emulator",
        upload_inputs=True,
        report=lambda _: None,
        on_change=on_change,
    ).run()
    running = [row for result in seen for row in result.rows if row.state == "running"]
    assert {row.phase for row in running} >= {"Running"}
    assert any(row.objective is not None for row in running)  # a step reported before the end
    assert seen[-1].summary.startswith("sweep swept-") and "4 completed" in seen[-1].summary


def test_an_override_of_a_searched_hyperparameter_is_a_set_warning(
    project: Path, cloud: EmulatedCloud
) -> None:
    with pytest.warns(SetWarning, match=r"^override hyperparameters.x=0.5: x is searched") as seen:
        sweep = Sweep("swept.yaml", profile="emulator", overrides=["hyperparameters.x=0.5"])
    assert seen[0].filename == __file__  # it points at the caller
    assert len(sweep.set_warnings) == 1

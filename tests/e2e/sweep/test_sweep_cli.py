"""``majob sweep SPEC`` then ``majob sweep show``: the table, the best spec, the plot."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.spec.load import load_spec
from majob.sweep.control import status


def test_sweep_then_show_writes_the_best_spec_and_a_plot(
    project: Path, cloud: EmulatedCloud
) -> None:
    command = ["sweep", "swept.yaml", "--profile", "emulator", "--upload-inputs"]
    ran = CliRunner().invoke(
        app,
        # x is searched: each trial's value replaces the --set one, which says so
        [*command, "--set", "hyperparameters.x=0.5"],
    )
    assert ran.exit_code == 0, ran.output
    assert ran.stderr.splitlines()[0] == (
        "warning: --set hyperparameters.x=0.5: x is searched (sweep.space.x), so every trial "
        "runs with its own sampled value; to fix x, remove it from sweep.space"
    )
    found = re.search(r"\[majob\] sweep (swept-[0-9a-f]{6}): 4 trials, 2 at once", ran.stdout)
    assert found, ran.stdout
    assert "[majob] smoke: the trial template runs locally first" in ran.stdout
    assert "[majob] local: passed" in ran.stdout
    assert re.search(r"sweep swept-[0-9a-f]{6}: 4 completed; best t\d \(x=", ran.stdout)

    sweep_id = found.group(1)
    shown = CliRunner().invoke(app, ["sweep", "show", sweep_id, "--html", "sweep.html"])
    assert shown.exit_code == 0, shown.output
    rows = re.findall(r"│ (t\d) +│ ([0-9.]+) +│ completed │ Completed +│ ([0-9.]+) ", shown.stdout)
    assert len(rows) == 4, shown.stdout
    objectives = [float(r[2]) for r in rows]
    assert objectives == sorted(objectives)  # best (lowest loss) first
    assert "best spec: " in shown.stdout and "swept.best.yaml" in shown.stdout

    best = load_spec(project / "swept.best.yaml")
    recorded = status(sweep_id).best
    assert recorded is not None and recorded.label == rows[0][0]
    assert best.sweep is None
    assert best.hyperparameters["x"] == recorded.params["x"]
    header = (project / "swept.best.yaml").read_text().splitlines()[0]
    assert header.startswith(f"# The best trial ({rows[0][0]}, job ")
    page = (project / "sweep.html").read_text()
    assert "<svg" in page and "objective over trials" in page

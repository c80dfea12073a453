"""Bad sweeps: one message at the field (file:line:col), exit 2, and nothing submitted."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud

from .conftest import write_spec
from .helpers import jobs_on_cloud

OBJECTIVE = "  objective: {metric: loss, goal: min}\n"

CASES = {
    "empty_space": (
        "  space: {}\n" + OBJECTIVE,
        "bad.yaml:12:10: sweep.space: no hyperparameter to search: name one, e.g. lr: {float: [0.0001, 0.1], log: true}",
    ),
    "inverted_range": (
        "  space:\n    x: {float: [1.0, 0.5]}\n" + OBJECTIVE,
        "bad.yaml:13:5: sweep.space.x: the range [1.0, 0.5] is empty: low must be below high",
    ),
    "log_of_zero": (
        "  space:\n    x: {float: [0.0, 1.0], log: true}\n" + OBJECTIVE,
        "bad.yaml:13:5: sweep.space.x: log: true needs low > 0 (got 0.0)",
    ),
    "no_kind": (
        "  space:\n    x: {log: true}\n" + OBJECTIVE,
        "bad.yaml:13:5: sweep.space.x: give exactly one of choice: [...], int: [low, high] or float: [low, high]",
    ),
    "undefined_metric": (
        "  space:\n    x: {choice: [0.1, 0.2]}\n  objective: {metric: accuracy, goal: max}\n",
        "bad.yaml:14:15: sweep.objective.metric: 'accuracy' is not a metric (defined: loss); define it under metrics: (e.g. accuracy: 'accuracy=([0-9.]+)') so the trials' logs report it",
    ),
    "over_quota": (
        "  space:\n    x: {choice: [0.1, 0.2]}\n" + OBJECTIVE + "  parallel: 20\n",
        "bad.yaml:15:3: sweep.parallel: 20 parallel trials of 1 node(s) need 20 nodes of modelarts.vm.cpu.8u, whose quota is 16: set sweep.parallel to at most 16",
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_a_bad_sweep_is_refused_at_its_field_before_anything_is_submitted(
    case: str, project: Path, cloud: EmulatedCloud
) -> None:
    block, expected = CASES[case]
    write_spec(project, name="bad", sweep=block)
    result = CliRunner().invoke(app, ["sweep", "bad.yaml", "--profile", "emulator"])
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert result.stderr.splitlines() == [f"error: {expected}"]
    assert jobs_on_cloud() == []
    assert not (project / ".majob" / "sweeps.journal").exists()


def test_command_line_overrides_meet_the_same_rules(project: Path, cloud: EmulatedCloud) -> None:
    result = CliRunner().invoke(
        app, ["sweep", "swept.yaml", "--parallel", "17", "--profile", "emulator"]
    )
    assert result.exit_code == 2, result.output
    assert "sweep.parallel to at most 16" in result.stderr
    assert jobs_on_cloud() == []


def test_a_spec_without_a_sweep_block_says_so(project: Path) -> None:
    (project / "plain.yaml").write_text((project / "swept.yaml").read_text().split("sweep:")[0])
    result = CliRunner().invoke(app, ["sweep", "plain.yaml"])
    assert result.exit_code == 2
    assert "error: plain.yaml has no sweep: block" in result.stderr


def test_an_action_needs_a_sweep_id_and_an_unknown_one_is_named(project: Path) -> None:
    missing = CliRunner().invoke(app, ["sweep", "show"])
    assert missing.exit_code == 2
    assert "majob sweep show needs the sweep's id" in missing.stderr
    unknown = CliRunner().invoke(app, ["sweep", "status", "nope-123456"])
    assert unknown.exit_code == 2
    assert "error: no sweep 'nope-123456' here" in unknown.stderr


def test_a_formal_sweep_needs_the_formal_gate_open(project: Path, cloud: EmulatedCloud) -> None:
    result = CliRunner().invoke(
        app, ["sweep", "swept.yaml", "--stage", "formal", "--profile", "emulator"]
    )
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith(
        "error: formal sweep refused for swept: the debug stage has not passed for swept yet"
    )
    assert "majob pipeline swept.yaml --until debug" in result.stderr
    assert jobs_on_cloud() == []


def test_a_template_that_fails_locally_submits_no_trial(
    project: Path, cloud: EmulatedCloud
) -> None:
    (project / "code" / "train.py").write_text("raise SystemExit('broken before any trial')\n")
    result = CliRunner().invoke(app, ["sweep", "swept.yaml", "--profile", "emulator"])
    assert result.exit_code == 2, result.output
    assert "error: the trial template failed locally, so no trial was submitted" in result.stderr
    assert jobs_on_cloud() == []

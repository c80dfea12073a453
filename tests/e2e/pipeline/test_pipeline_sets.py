"""``majob pipeline --set`` warns about a field a stage it runs overrides (the override wins),
and only for the stages it runs."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app

runner = CliRunner()


def test_a_set_the_debug_override_beats_is_warned_about_when_debug_is_in_the_run(
    project: Path,
) -> None:
    warning = (
        "warning: --set hyperparameters.epochs=2: the debug stage runs with "
        "stages.debug.hyperparameters.epochs=1 from the spec (a stage's override wins); to "
        "change it there, --set stages.debug.hyperparameters.epochs=2\n"
    )
    sets = ["--set", "hyperparameters.epochs=2"]
    # The gate refuses before anything runs: the warning comes first all the same.
    refused = runner.invoke(app, ["pipeline", "tiny.yaml", "--from", "debug", *sets])
    assert refused.exit_code == 2
    assert refused.stderr.startswith(warning), refused.stderr
    local = runner.invoke(app, ["pipeline", "tiny.yaml", "--until", "local", *sets])
    assert local.exit_code == 0, local.output
    assert "warning" not in local.stderr
    assert "[worker-0] epoch 1 loss=0.5" in local.stdout  # --set reached the local stage

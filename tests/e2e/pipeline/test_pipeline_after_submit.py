"""A stage passed by ``majob submit --wait`` is a passed stage for ``majob pipeline``: the
ledger record is the same whoever wrote it, so the pipeline does not submit it again."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger

runner = CliRunner()


def test_pipeline_skips_the_debug_stage_a_submit_just_passed(
    project: Path, cloud: EmulatedCloud
) -> None:
    emulator = ["--profile", "emulator"]
    submitted = runner.invoke(
        app, ["submit", "tiny.yaml", "--stage", "debug", "--wait", "--upload-inputs", *emulator]
    )
    assert submitted.exit_code == 0, submitted.output
    assert "[majob] debug passed: ledger record #1" in submitted.output

    result = runner.invoke(app, ["pipeline", "tiny.yaml", "--until", "debug", *emulator])
    assert result.exit_code == 0, result.output
    assert "[majob] local: runs (has not passed yet)" in result.output
    assert "[majob] debug: skipped, passed for this code and spec (#1)" in result.output
    assert "submitted" not in result.output
    assert result.output.splitlines()[-1] == "[majob] pipeline passed: local (debug passed before)"
    with Ledger() as ledger:
        assert [(r.stage, r.result) for r in ledger.records("tiny")] == [
            ("local", "passed"),
            ("debug", "passed"),
        ]

"""``majob pipeline`` in a terminal draws the same live line as ``submit --wait``: a queued
stage counts its wait (it said only "submitted"), a running one its time and last metrics.
``TTY_COMPATIBLE=1`` makes the captured output a terminal, where rich draws the line."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud

TERMINAL = {"TTY_COMPATIBLE": "1", "COLUMNS": "100"}


def test_a_queued_then_running_debug_stage_has_a_live_line(
    project: Path, cloud: EmulatedCloud
) -> None:
    cloud.modelarts.add_job_fault(name="-debug$", delays={"Pending": 2.5}, count=1)
    result = CliRunner().invoke(
        app,
        [
            *("pipeline", "tiny.yaml", "--until", "debug", "--upload-inputs"),
            *("--profile", "emulator", "--set", "hyperparameters.sleep=2.5"),
        ],
        env=TERMINAL,
    )
    assert result.exit_code == 0, result.output
    drawn = set(re.findall(r"tiny-debug \([0-9a-f]{8}\): ([^\r\n]*)", result.output))
    # The seconds drawn depend on how loaded this machine is; that each phase counts does not.
    assert any(re.fullmatch(r"Pending \(Queuing\), waiting 0m0[1-9]s", d) for d in drawn), drawn
    assert any(re.fullmatch(r"Running, 0m0[1-9]s · loss 1(\.0+)?", d) for d in drawn), drawn

"""``majob submit --wait`` in a terminal: the status line under the log ticks while the job
runs (no phase changes meanwhile) and carries the last metric values. rich draws it only on a
terminal: ``TTY_COMPATIBLE=1`` makes the captured output one."""

from __future__ import annotations

import re
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app

TERMINAL = {"TTY_COMPATIBLE": "1", "COLUMNS": "100"}


def test_the_status_line_ticks_and_shows_the_metrics(project: Path, service) -> None:
    spec = project / "spec.yaml"
    # The job runs 4 s after its last step, with no phase change: the line must count them.
    text = spec.read_text().replace("{sleep: 0}", "{sleep: 4}")
    spec.write_text(text + "metrics: {step: 'step ([0-9]+)'}\n")
    result = CliRunner().invoke(
        app,
        ["submit", str(spec), "--wait", "--upload-inputs", "--profile", "emulator"],
        env=TERMINAL,
    )
    assert result.exit_code == 0, result.output
    job_id = re.search(r"submitted job ([0-9a-f-]{36})", result.output)
    assert job_id is not None
    drawn = set(re.findall(rf"tiny-debug \({job_id[1][:8]}\): ([^\r\n]*)", result.output))
    # Which seconds are drawn depends on how fast this machine is now; that it ticks does not.
    ticks = {m[1] for line in drawn if (m := re.fullmatch(r"Running, 0m(\d\d)s · step 2", line))}
    assert len(ticks) >= 2, drawn

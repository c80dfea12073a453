"""Every run's step time said as it goes: the node bootstrap's ``[majob] step time: ...`` line
in the node log of ``majob run``, and on the live status line of ``majob submit --wait``
(emulated ModelArts). ``step_line_seconds`` is a microsecond, so every step after step 0 says
its line; only the line's shape and a positive number are checked, never a value."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli import follow
from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.live import LiveLine
from majob.storage.obs import ObsObjectStore

from .test_collect import BUCKET, SPEC, TRAIN

pytestmark = pytest.mark.slow

NODE_LINE = re.compile(
    r"^\[worker-0\] \[majob\] step time: (?P<ms>[\d.]+(?:e-\d+)?) ms "
    r"\(median of steps (?P<first>\d+)-(?P<last>\d+), rank 0\)$",
    re.M,
)


def _project(tmp_path: Path, seconds: str) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text(TRAIN, encoding="utf-8")
    spec = tmp_path / "spec.yaml"
    text = SPEC.format(bucket=BUCKET).replace(
        "active: 3}", f"active: 3, step_line_seconds: {seconds}}}"
    )
    spec.write_text(text, encoding="utf-8")
    return spec


def test_run_shows_each_node_s_step_time_in_its_log(tmp_path: Path) -> None:
    spec = _project(tmp_path, "0.000001")
    runs = tmp_path / "runs"
    result = CliRunner().invoke(app, ["run", str(spec), "--runs-dir", str(runs)])
    assert result.exit_code == 0, result.output
    said = list(NODE_LINE.finditer(result.stdout))
    assert said, result.stdout
    assert all(float(m["ms"]) > 0 and int(m["first"]) <= int(m["last"]) for m in said)
    assert {int(m["first"]) for m in said} <= set(range(1, 12))  # step 0 is never in a line
    # the node's line is its log's, and the run's end still gives the percentiles
    assert re.search(r"^step time p50 [\d.]+ ms, p95 [\d.]+ ms \(11 steps", result.stdout, re.M)


def test_zero_seconds_says_no_step_line(tmp_path: Path) -> None:
    spec = _project(tmp_path, "0")
    result = CliRunner().invoke(app, ["run", str(spec), "--runs-dir", str(tmp_path / "runs")])
    assert result.exit_code == 0, result.output
    assert "[majob] step time:" not in result.output


def test_submit_wait_shows_the_step_time_on_the_live_line(
    tmp_path: Path,
    cloud: EmulatedCloud,
    store: ObsObjectStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = _project(tmp_path, "0.000001")
    drawn: list[LiveLine] = []
    status = follow.live_status

    def kept(line: LiveLine, shown: object = None) -> object:
        drawn.append(line)  # the line the terminal would redraw, kept to be read after
        return status(line)

    monkeypatch.setattr(follow, "live_status", kept)
    args = ["submit", str(spec), "--profile", "emulator", "--wait", "--perf"]
    result = CliRunner().invoke(app, [*args, "--ledger", str(tmp_path / "ledger.db")])
    assert result.exit_code == 0, result.output
    assert re.search(r"\[majob\] step time: [\d.]+(e-\d+)? ms \(median of steps", result.stdout)
    (line,) = drawn
    shown = re.search(r" · step (?P<ms>[\d.]+(?:e-\d+)?) ms$", line.text())
    assert shown is not None and float(shown["ms"]) > 0, line.text()

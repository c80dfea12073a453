"""The emulator daemon owns its state dir alone, keeps it private, and signals only itself."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

runner = CliRunner()


def majob(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "majob", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


@pytest.fixture
def stranger() -> Iterator[subprocess.Popen[bytes]]:
    """Someone else's process: a stale record may name its pid."""
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process
    process.kill()
    process.wait()


@pytest.mark.slow
def test_two_starts_at_once_make_one_private_daemon(tmp_path: Path) -> None:
    state = tmp_path / "state"
    first = majob("emulator", "start", "--state-dir", str(state))
    second = majob("emulator", "start", "--state-dir", str(state))
    outputs = [process.communicate(timeout=120) for process in (first, second)]
    try:
        assert [first.returncode, second.returncode] == [0, 0], outputs
        pids = {line.split("(pid ")[1].rstrip(")") for out, _ in outputs for line in
                out.splitlines() if "(pid " in line}  # fmt: skip
        assert len(pids) == 1, outputs  # both name the one daemon
        assert sum("already running" in out for out, _ in outputs) == 1
        assert mode(state) == 0o700
        for name in ("emulator.pid", "state.json", "emulator.log", "emulator.lock"):
            assert mode(state / name) == 0o600, name
        # The daemon that holds the state refuses another over it, and keeps running.
        refused = subprocess.run(
            [sys.executable, "-m", "majob", "emulator", "start", "--foreground",
             "--state-dir", str(state)],
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert refused.returncode == 2, refused.stderr
        assert f"another emulator is running over {state} (pid {pids.pop()})" in refused.stderr
        status = runner.invoke(app, ["emulator", "status", "--state-dir", str(state)])
        assert status.exit_code == 0, status.output
    finally:
        stopped = runner.invoke(app, ["emulator", "stop", "--state-dir", str(state)])
    assert stopped.exit_code == 0 and "stopped the emulator" in stopped.output


@pytest.mark.parametrize("record", ["state.json", "emulator.pid"])
def test_stop_leaves_alone_a_process_a_stale_record_names(
    tmp_path: Path, stranger: subprocess.Popen[bytes], record: str
) -> None:
    state = tmp_path / "state"
    state.mkdir()
    if record == "state.json":  # the pid was reused since: the start time differs
        content = {"obs": "http://127.0.0.1:1", "modelarts": "http://127.0.0.1:2",
                   "pid": stranger.pid, "started": "long ago"}  # fmt: skip
        (state / record).write_text(json.dumps(content))
    else:  # a pid file of an older majob: a bare pid
        (state / record).write_text(f"{stranger.pid}\n")
    status = runner.invoke(app, ["emulator", "status", "--state-dir", str(state)])
    assert status.exit_code == 2 and "the emulator is not running" in status.output
    stopped = runner.invoke(app, ["emulator", "stop", "--state-dir", str(state)])
    assert stopped.exit_code == 0, stopped.output
    assert stopped.output.strip() == "the emulator is not running"
    assert stranger.poll() is None
    assert not (state / record).exists()  # the stale record is cleared


def test_the_state_dir_is_created_private(tmp_path: Path) -> None:
    from majob.emulator.cloud import EmulatedCloud

    with EmulatedCloud(tmp_path / "fresh" / "state"):
        assert mode(tmp_path / "fresh" / "state") == 0o700
        assert mode(tmp_path / "fresh" / "state" / "state.json") == 0o600
    assert os.path.isdir(tmp_path / "fresh" / "state")

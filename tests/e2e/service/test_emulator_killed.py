"""The emulator is killed (SIGKILL) and restarted while ``majob submit --wait`` follows a job:
the wait survives the outage, reconnects to the new ports and reports the lost job Abnormal."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.testing import wait_until

pytestmark = pytest.mark.slow

DAEMON = """\
import sys, time
from pathlib import Path
from majob.emulator.cloud import EmulatedCloud
with EmulatedCloud(Path(sys.argv[1]), buckets=("majob-demo",)):
    while True:
        time.sleep(1)
"""


def started_emulator(state: Path) -> subprocess.Popen[bytes]:
    (state / "state.json").unlink(missing_ok=True)
    process = subprocess.Popen([sys.executable, "-c", DAEMON, str(state)])

    def published() -> bool:
        try:
            return bool(json.loads((state / "state.json").read_text())["pid"] == process.pid)
        except (OSError, ValueError, KeyError):
            return False

    try:
        wait_until(published, "the emulator to start")
    except AssertionError:
        process.kill()
        raise
    return process


@pytest.fixture
def environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    state = tmp_path / "emulator"
    state.mkdir()
    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(state))
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "MAJOB_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    yield state


def test_wait_resumes_after_the_emulator_is_killed(project: Path, environment: Path) -> None:
    first = started_emulator(environment)
    second: subprocess.Popen[bytes] | None = None
    waiter = subprocess.Popen(
        [sys.executable, "-m", "majob", "submit", str(project / "spec.yaml"),
         "--profile", "emulator", "--upload-inputs", "--wait",
         "--set", "hyperparameters.sleep=20"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    seen: list[str] = []
    running = threading.Event()
    lost = threading.Event()

    def read() -> None:
        assert waiter.stdout is not None
        for line in waiter.stdout:
            seen.append(line)
            if "[worker-0] step 2" in line:
                running.set()
            if "connection lost" in line:
                lost.set()

    reader = threading.Thread(target=read)
    reader.start()
    try:
        assert running.wait(60), "".join(seen)
        first.send_signal(signal.SIGKILL)
        first.wait(30)
        assert lost.wait(60), "".join(seen)
        second = started_emulator(environment)
        code = waiter.wait(120)
    finally:
        for process in (waiter, first, second):
            if process is not None and process.poll() is None:
                process.kill()
                process.wait()
        reader.join(10)
    assert waiter.stderr is not None
    errors = waiter.stderr.read()
    waiter.stderr.close()
    assert waiter.stdout is not None
    waiter.stdout.close()
    output = "".join(seen)
    assert code == 1, output + errors
    assert "majob: connection back" in output
    assert "ended Abnormal" in errors

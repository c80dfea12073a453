"""``make demo`` stops the emulator only when it started it: an emulator that was already
running belongs to someone else (another terminal, a notebook) and is left running.

The Makefile's own recipe runs, with stand-ins for ``majob`` and ``python`` in a venv of its
own: the ``majob`` one logs each command it is given and answers ``emulator start`` as the
real one does.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = """#!/bin/sh
echo "$*" >> "$DEMO_LOG"
if [ "$1 $2" = "emulator start" ]; then
  if [ "$EMULATOR_WAS_RUNNING" = 1 ]; then
    echo "the emulator is already running (pid 4242)"
  else
    echo "the emulator is running (pid 4242)"
  fi
fi
exit 0
"""


def _demo(tmp_path: Path, *, already_running: bool) -> list[str]:
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    for name, text in (("majob", STAND_IN), ("python", "#!/bin/sh\nexit 0\n")):
        script = venv / "bin" / name
        script.write_text(text, encoding="utf-8")
        script.chmod(0o755)
    # Newer than pyproject.toml: `make setup` has nothing to do.
    (venv / ".majob-installed").touch()
    log = tmp_path / "commands.log"
    environ = {
        **os.environ,
        "DEMO_LOG": str(log),
        "EMULATOR_WAS_RUNNING": "1" if already_running else "0",
    }
    done = subprocess.run(
        [shutil.which("make") or "make", "-s", "-C", str(ROOT), "demo", f"VENV={venv}"],
        env=environ,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return log.read_text(encoding="utf-8").splitlines()


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_demo_stops_the_emulator_it_started(tmp_path: Path) -> None:
    commands = _demo(tmp_path, already_running=False)
    assert commands[0] == "emulator start"
    assert any(c.startswith("pipeline job_specs/mnist.yaml") for c in commands)
    assert commands[-1] == "emulator stop"


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_demo_leaves_a_running_emulator_running(tmp_path: Path) -> None:
    commands = _demo(tmp_path, already_running=True)
    assert commands[0] == "emulator start"
    assert any(c.startswith("pipeline job_specs/mnist.yaml") for c in commands)
    assert "emulator stop" not in commands

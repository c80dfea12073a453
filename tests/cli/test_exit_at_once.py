"""validate, compile and schema end with os._exit: their whole output, their exit code and the
atexit handlers must survive it (majob.cli.app._exit_at_once)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SPEC = ROOT / "job_specs" / "mnist.yaml"


def _majob(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "majob", *args], capture_output=True, text=True, check=False
    )


def test_a_long_output_arrives_whole_through_a_pipe() -> None:
    done = _majob("schema")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout) > 10_000  # more than one pipe buffer's worth
    assert json.loads(done.stdout)["title"]


def test_the_exit_codes_are_the_commands_own(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: x\nunknown_key: 1\n", encoding="utf-8")
    assert _majob("validate", str(SPEC)).returncode == 0
    done = _majob("validate", str(bad))
    assert done.returncode == 2
    assert done.stderr.startswith("error: ")
    compiled = _majob("compile", str(SPEC), "--target", "rest")
    assert compiled.returncode == 0, compiled.stderr
    assert json.loads(compiled.stdout)["kind"] == "job"


def test_atexit_handlers_still_run() -> None:
    code = (
        "import atexit, sys\nfrom majob.cli.app import main\n"
        "atexit.register(lambda: print('handler ran', file=sys.stderr))\n"
        f"sys.argv = ['majob', 'validate', {str(SPEC)!r}]\nmain()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert done.returncode == 0
    assert done.stdout.startswith("ok: ") and done.stderr.endswith("handler ran\n")

"""The examples' checkpoints.py (plain Python, torch's save/load passed in): a save killed
half-way leaves the previous checkpoint the one loaded, a corrupt newest one is skipped for the
one before, and the MNIST and DDP examples carry the same copy."""

from __future__ import annotations

import importlib.util
import pickle
import subprocess
import sys
import textwrap
from pathlib import Path
from types import ModuleType
from typing import IO, Any

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
HELPER = EXAMPLES / "mnist" / "checkpoints.py"


@pytest.fixture
def checkpoints() -> ModuleType:
    spec = importlib.util.spec_from_file_location("example_checkpoints", HELPER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _save(state: Any, out: IO[bytes]) -> None:
    pickle.dump(state, out)


def _load(path: str) -> Any:
    with open(path, "rb") as saved:
        return pickle.load(saved)


def test_the_examples_carry_the_same_helper() -> None:
    # Each example's folder is uploaded on its own as the job's code: each needs its copy.
    assert (EXAMPLES / "ddp_resnet" / "checkpoints.py").read_bytes() == HELPER.read_bytes()


def test_saved_checkpoints_load_newest_first_and_only_the_last_two_stay(
    checkpoints: ModuleType, tmp_path: Path
) -> None:
    for epoch in range(4):
        checkpoints.save_checkpoint(str(tmp_path), epoch, {"epoch": epoch}, _save)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["epoch-0002.pt", "epoch-0003.pt"]
    assert checkpoints.load_latest(str(tmp_path), _load) == (3, {"epoch": 3})
    assert checkpoints.load_latest(str(tmp_path / "none"), _load) is None


def test_a_kill_during_a_save_leaves_the_previous_checkpoint_the_one_loaded(
    checkpoints: ModuleType, tmp_path: Path
) -> None:
    # A real process killed (SIGKILL) in the middle of writing epoch 1's checkpoint.
    script = textwrap.dedent(f"""\
        import os, signal, sys
        sys.path.insert(0, {str(HELPER.parent)!r})
        from checkpoints import save_checkpoint
        import pickle
        save_checkpoint({str(tmp_path)!r}, 0, {{"epoch": 0}}, pickle.dump)
        def half_then_killed(state, out):
            out.write(pickle.dumps(state)[:5])
            out.flush()
            os.kill(os.getpid(), signal.SIGKILL)
        save_checkpoint({str(tmp_path)!r}, 1, {{"epoch": 1}}, half_then_killed)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=60)
    assert done.returncode == -9, done.stderr
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names[0] == "epoch-0000.pt" and names[1].startswith("epoch-0001.pt.partial-")
    assert checkpoints.load_latest(str(tmp_path), _load) == (0, {"epoch": 0})
    assert [p.name for p in tmp_path.iterdir()] == ["epoch-0000.pt"]  # the stray one removed


def test_a_corrupt_newest_checkpoint_falls_back_to_the_one_before(
    checkpoints: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for epoch in range(2):
        checkpoints.save_checkpoint(str(tmp_path), epoch, {"epoch": epoch}, _save)
    (tmp_path / "epoch-0001.pt").write_bytes(b"\x80\x04 not a pickle")
    assert checkpoints.load_latest(str(tmp_path), _load) == (0, {"epoch": 0})
    assert "checkpoint epoch-0001.pt does not load" in capsys.readouterr().out
    (tmp_path / "epoch-0000.pt").write_bytes(b"")
    assert checkpoints.load_latest(str(tmp_path), _load) is None  # nothing good: a fresh start

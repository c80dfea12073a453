"""A Ctrl-C during a sweep stays a Ctrl-C, even when a library's cleanup raises over it."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from majob.sweep.ctrl_c import ctrl_c_kept


def _lock_released_twice(lock: Path) -> None:
    # optuna's journal lock: rename, unlink, and on any interruption unlink again
    moved = lock.with_suffix(".rename")
    try:
        lock.rename(moved)
        os.unlink(moved)
        raise KeyboardInterrupt  # the Ctrl-C lands just after the unlink
    except BaseException:
        os.unlink(moved)  # FileNotFoundError, raised while handling the Ctrl-C
        raise


def test_an_error_raised_over_a_ctrl_c_is_the_ctrl_c(tmp_path: Path) -> None:
    lock = tmp_path / "sweeps.journal.lock"
    lock.write_text("")
    with pytest.raises(KeyboardInterrupt) as caught, ctrl_c_kept():
        _lock_released_twice(lock)
    assert isinstance(caught.value.__cause__, FileNotFoundError)


def test_other_errors_and_a_plain_ctrl_c_pass_unchanged() -> None:
    with pytest.raises(ValueError, match="bad"), ctrl_c_kept():
        try:
            raise OSError("first")
        except OSError:
            raise ValueError("bad") from None
    with pytest.raises(KeyboardInterrupt), ctrl_c_kept():
        raise KeyboardInterrupt

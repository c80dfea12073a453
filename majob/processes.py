"""Whether a process still lives, for records that name the process that wrote them (the
emulator daemon's state file, a ledger record left ``running``)."""

from __future__ import annotations

import os

__all__ = ["pid_alive"]


def pid_alive(pid: int) -> bool:
    """A process with this id exists (signal 0 checks without disturbing it)."""
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's live process
        return True
    return True

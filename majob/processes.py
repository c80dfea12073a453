"""Is this pid still the process we recorded? For records that name the process that wrote them
(the emulator daemon's state and pid files, the pids of an emulated job's nodes, a ledger record
left ``running``) and for every signal sent to such a pid.

A pid alone does not say: once its process ends, the pid is free, and a stale record may name
someone else's process that got the number later. A ``ProcessRef`` adds when the process
started, read from ``/proc/<pid>/stat`` (clock ticks since boot, with the boot id: a reboot
restarts the clock) or, where there is no ``/proc`` (macOS), from ``ps -o lstart=``. A process
is ours only while both match; a record without a start time, or a process whose start time
cannot be read, is never taken for ours (such a pid is never signalled).

A zombie (a process that died but whose parent has not reaped it yet: a harness that killed a
majob without waiting for it, a container whose first process reaps nothing) keeps its pid and
its ``/proc`` entry, start time and all, yet runs nothing: it has no start time here, so a
ledger record of a pipeline killed with ``kill -9`` reads ``interrupted`` at once.
"""

from __future__ import annotations

import os
import socket
import subprocess
from dataclasses import dataclass
from pathlib import Path

__all__ = ["ProcessRef", "pid_alive", "signal_if_ours", "start_time", "this_host"]

PROC = Path("/proc")
# The states (field 3 of /proc/<pid>/stat, the first letter of ps's STAT) of a process that
# has died: a zombie waits for its parent to reap it, X is its last moment.
DEAD_STATES = frozenset({"Z", "X"})


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


def start_time(pid: int, *, proc: Path = PROC) -> str | None:
    """When process ``pid`` started, as an opaque token; None when it is gone or unknowable."""
    if pid <= 0:
        return None
    if proc.is_dir():
        return _proc_start_time(pid, proc)
    return _ps_start_time(pid)


def _proc_start_time(pid: int, proc: Path) -> str | None:
    try:
        stat = (proc / str(pid) / "stat").read_text(encoding="ascii", errors="replace")
    except OSError:
        return None
    # The command name (field 2) is in parentheses and may hold spaces and ')': the fields
    # after the last ')' start at field 3; the start time is field 22.
    fields = stat[stat.rfind(")") + 2 :].split()
    if len(fields) < 20 or fields[0] in DEAD_STATES:
        return None
    return f"{_boot_id(proc)}:{fields[19]}"


def _boot_id(proc: Path) -> str:
    try:
        return (proc / "sys" / "kernel" / "random" / "boot_id").read_text().strip()
    except OSError:
        return ""


def _ps_start_time(pid: int) -> str | None:
    """``ps -o lstart=``: the start to the second, in the C locale (POSIX systems without
    ``/proc``, such as macOS); none for a zombie (``stat`` Z)."""
    try:
        out = subprocess.run(
            ["ps", "-o", "stat=,lstart=", "-p", str(pid)],
            capture_output=True,
            text=True,
            env={**os.environ, "LC_ALL": "C"},
            timeout=10,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    state, _, started = " ".join(out.stdout.split()).partition(" ")
    if out.returncode != 0 or not started or state[:1] in DEAD_STATES:
        return None
    return started


def this_host() -> str:
    return socket.gethostname()


@dataclass(frozen=True)
class ProcessRef:
    """A process as recorded: its pid and start time (``started``; empty when the record is
    older than this field, and then nothing is taken for that process)."""

    pid: int
    started: str = ""

    @classmethod
    def of(cls, pid: int) -> ProcessRef:
        """The live process ``pid`` as it is now (a child just started, or this process)."""
        return cls(pid, start_time(pid) or "")

    @classmethod
    def current(cls) -> ProcessRef:
        return cls.of(os.getpid())

    def is_running(self) -> bool:
        """The recorded process still runs: the pid lives and started when recorded."""
        return bool(self.started) and start_time(self.pid) == self.started

    def to_text(self) -> str:
        """Two lines, for a pid file: the pid first (what a human or ``kill`` reads)."""
        return f"{self.pid}\n{self.started}\n"

    @classmethod
    def from_text(cls, text: str) -> ProcessRef | None:
        lines = text.splitlines()
        try:
            pid = int(lines[0].strip())
        except (IndexError, ValueError):
            return None
        return cls(pid, lines[1].strip() if len(lines) > 1 else "")


def signal_if_ours(process: ProcessRef, signum: int, *, group: bool = False) -> bool:
    """Send ``signum`` to the recorded process (to its process group with ``group``), only
    while it is still that process; whether it was sent."""
    if not process.is_running():
        return False
    try:
        if group:
            os.killpg(process.pid, signum)
        else:
            os.kill(process.pid, signum)
    except (ProcessLookupError, PermissionError):
        return False
    return True

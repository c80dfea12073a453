"""The emulator's state dir: private to its user, and held by one emulator at a time.

Two emulators over one state dir would each mark the other's jobs ``Abnormal`` (and kill their
processes) and compact one OBS journal, so the emulator that opens the state dir holds
``emulator.lock`` (an ``flock``, released by the kernel if the process dies) until it stops.

The dir is created 0700 and the files in it 0600, from the start (not chmod-ed afterwards): the
state holds every job's code, data and logs. The emulator's HTTP endpoints take its published
test keys, so any local user can still call them (docs/emulator.md says so).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

from filelock import BaseFileLock, FileLock, Timeout

from majob.errors import ConfigError
from majob.processes import ProcessRef

PRIVATE_DIR = 0o700
PRIVATE_FILE = 0o600
PID_FILE = "emulator.pid"  # the process holding the dir, written first
LOCK_FILE = "emulator.lock"


def make_private_dir(path: Path) -> None:
    """``path`` and its missing parents; ``path`` itself is created 0700 (an existing one is
    left as it is)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.mkdir(mode=PRIVATE_DIR, exist_ok=True)


def write_private(path: Path, text: str) -> None:
    """Replace ``path`` atomically with ``text``, through a file created 0600."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, PRIVATE_FILE)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        with contextlib.suppress(OSError):
            temporary.unlink()
        raise


def _lock(state_dir: Path) -> BaseFileLock:
    # Not thread-local: the thread that stops an emulator need not be the one that started it.
    return FileLock(state_dir / LOCK_FILE, mode=PRIVATE_FILE, thread_local=False)


def hold(state_dir: Path) -> BaseFileLock:
    """Take the state dir for this process, or raise ``ConfigError`` naming the emulator that
    holds it."""
    lock = _lock(state_dir)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        holder = recorded_holder(state_dir)
        raise ConfigError(
            f"another emulator is running over {state_dir}"
            + (f" (pid {holder.pid})" if holder is not None else ""),
            hint=f"stop it with `majob emulator stop --state-dir {state_dir}`, or give this one "
            "another --state-dir",
        ) from None
    return lock


def held_elsewhere(state_dir: Path) -> bool:
    """Another process holds the state dir right now."""
    if not (state_dir / LOCK_FILE).exists():
        return False
    lock = _lock(state_dir)
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


def recorded_holder(state_dir: Path) -> ProcessRef | None:
    """The process the pid file names (it may be gone, or be another process by now)."""
    try:
        return ProcessRef.from_text((state_dir / PID_FILE).read_text(encoding="utf-8"))
    except OSError:
        return None

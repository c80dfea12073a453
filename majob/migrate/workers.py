"""Checking a large tree on every core, as flake8 and ruff do.

Each file is checked on its own (guards are followed through calls within one file only), so
files can be shared out to worker processes and their reports put back in order. A worker pays
for itself only with enough source to check: under ``MIN_BYTES_PER_WORKER`` per worker the
pool's start-up and the pickling of reports cost more than they save.
"""

from __future__ import annotations

import multiprocessing
import os
import sys
import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from itertools import repeat
from multiprocessing.context import BaseContext
from pathlib import Path
from typing import TypeVar

__all__ = ["MIN_BYTES_PER_WORKER", "available_cpus", "map_in_workers", "worker_count"]

# Measured with bench/check_speed.py --lines N on 2 CPUs: 5,000 lines (197 KB) check faster in one
# process, 8,000 lines (321 KB) 15% faster in two, 20,000 lines (771 KB) twice as fast.
MIN_BYTES_PER_WORKER = 128 * 1024
_FILES_PER_TASK = 16  # small enough to balance uneven files, large enough to batch the pickling

Item = TypeVar("Item")
Result = TypeVar("Result")


def available_cpus() -> int:
    """The CPUs this process may run on (a container's or ``taskset``'s limit included)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_count(requested: int | None, files: Sequence[Path]) -> int:
    """How many processes check ``files``: ``requested`` when given (``--jobs``), else one per
    CPU with at least ``MIN_BYTES_PER_WORKER`` of source each, and one where a fork is unsafe."""
    if requested is not None:
        return max(1, min(requested, len(files)))
    if not _fork_is_safe():
        return 1
    total = 0
    for path in files:
        try:
            total += path.stat().st_size
        except OSError:
            continue  # the check itself reports the unreadable file
    return max(1, min(available_cpus(), total // MIN_BYTES_PER_WORKER, len(files)))


def _fork_is_safe() -> bool:
    # A fork copies only the calling thread: in a process with other threads (a notebook
    # kernel, a test session with a server running) a child could inherit a lock held by one
    # of them mid-operation. Such callers check in one process unless they ask for --jobs.
    return (
        sys.platform == "linux"
        and "fork" in multiprocessing.get_all_start_methods()
        and threading.active_count() == 1
    )


def _context() -> BaseContext:
    # fork: the workers start with majob already imported (spawn would import it again, ~0.1 s).
    return multiprocessing.get_context("fork" if _fork_is_safe() else "spawn")


def _run_task(function: Callable[[Item], Result], items: list[Item]) -> list[Result]:
    return [function(item) for item in items]


def map_in_workers(
    function: Callable[[Item], Result], items: Sequence[Item], workers: int
) -> list[Result]:
    """``[function(item) for item in items]`` on ``workers`` processes, in the order of
    ``items``. ``function`` must be a module-level function (it is pickled by name)."""
    if workers <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    tasks = [list(items[i : i + _FILES_PER_TASK]) for i in range(0, len(items), _FILES_PER_TASK)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        chunks = pool.map(_run_task, repeat(function), tasks)
        return [result for chunk in chunks for result in chunk]

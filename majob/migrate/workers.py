"""Checking a large tree on every core, as flake8 and ruff do.

Each file is checked on its own (guards are followed through calls within one file only), so
files can be shared out to worker processes and their reports put back in order. A worker pays
for itself only with enough source to check: under ``MIN_BYTES_PER_WORKER`` per worker the
start of a process and the pickling of reports cost more than they save.

Where a fork is safe (Linux, one thread) the work is dealt from a pipe: the numbers of the
tasks, the largest files first, are written into it before any child starts, and this process
and its forked children each read the next number when they are free (a read of a few bytes
from a pipe is whole), so whichever CPU is faster does more and all end together. The children
send back their reports through a pipe of their own and end with ``os._exit``, skipping the
interpreter's teardown (each file's tree is freed as the file is done, as in one process).
Elsewhere the workers are spawned by ``concurrent.futures``, which is imported only then.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from itertools import repeat
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

if TYPE_CHECKING:
    from multiprocessing.context import BaseContext

__all__ = [
    "MIN_BYTES_PER_WORKER",
    "available_cpus",
    "file_sizes",
    "map_in_workers",
    "worker_count",
]

# Measured on 2 CPUs (15 interleaved runs each, -j 1 against -j 2): with forked workers, 20 KB and
# 40 KB of source check as fast either way, 93 KB (2,300 lines) 8% faster in two, 197 KB (5,000
# lines) 19% faster. (With a process pool, which took ~30 ms to import and start, two paid only
# from about 256 KB.)
MIN_BYTES_PER_WORKER = 32 * 1024
_NUMBER = 4  # bytes per task number in the pipe the tasks are dealt from
_FILES_PER_TASK = 16  # spawned workers: small enough to balance uneven files, large enough to batch

Item = TypeVar("Item")
Result = TypeVar("Result")


def available_cpus() -> int:
    """The CPUs this process may run on (a container's or ``taskset``'s limit included)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def worker_count(requested: int | None, sizes: Sequence[int]) -> int:
    """How many processes check files of ``sizes`` (bytes): ``requested`` when given (``--jobs``),
    else one per CPU with at least ``MIN_BYTES_PER_WORKER`` of source each, and one where a fork
    is unsafe."""
    if requested is not None:
        return max(1, min(requested, len(sizes)))
    if not _fork_is_safe():
        return 1
    return max(1, min(available_cpus(), sum(sizes) // MIN_BYTES_PER_WORKER, len(sizes)))


def file_sizes(files: Sequence[Path]) -> list[int]:
    """The size of each file in bytes; 0 for one that cannot be read (its check says why)."""
    sizes = []
    for path in files:
        try:
            sizes.append(path.stat().st_size)
        except OSError:
            sizes.append(0)
    return sizes


def _fork_is_safe() -> bool:
    # A fork copies only the calling thread: in a process with other threads (a notebook
    # kernel, a test session with a server running) a child could inherit a lock held by one
    # of them mid-operation. Such callers check in one process unless they ask for --jobs.
    return sys.platform == "linux" and hasattr(os, "fork") and threading.active_count() == 1


def _context() -> BaseContext:
    import multiprocessing

    # fork: the workers start with majob already imported (spawn would import it again, ~0.1 s).
    return multiprocessing.get_context("fork" if _fork_is_safe() else "spawn")


def _run_task(function: Callable[[Item], Result], items: list[Item]) -> list[Result]:
    return [function(item) for item in items]


def map_in_workers(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    workers: int,
    weights: Sequence[int] | None = None,
) -> list[Result]:
    """``[function(item) for item in items]`` on ``workers`` processes, in the order of
    ``items``; ``weights`` (each item's size): the heaviest are dealt first. ``function`` must be a
    module-level function where the workers are spawned (it is pickled by name)."""
    if workers <= 1 or len(items) <= 1:
        return [function(item) for item in items]
    if _fork_is_safe():
        return _map_forked(function, items, workers, weights or [1] * len(items))
    from concurrent.futures import ProcessPoolExecutor

    tasks = [list(items[i : i + _FILES_PER_TASK]) for i in range(0, len(items), _FILES_PER_TASK)]
    with ProcessPoolExecutor(max_workers=workers, mp_context=_context()) as pool:
        chunks = pool.map(_run_task, repeat(function), tasks)
        return [result for chunk in chunks for result in chunk]


class WorkerFailed(RuntimeError):
    """A forked worker ended without sending its results (killed, or out of memory)."""


def _map_forked(
    function: Callable[[Item], Result],
    items: Sequence[Item],
    workers: int,
    weights: Sequence[int],
) -> list[Result]:
    # pickle is loaded here, before the fork, so that each child finds it loaded; a check in one
    # process never needs it (~2 ms of every start, when it was imported with this module).
    import pickle

    del pickle  # the children and _results_of use it through their own imports
    results: dict[int, Result] = {}
    for stream in (sys.stdout, sys.stderr):  # a child must not write what this one had buffered
        if stream is not None:  # None under pythonw
            stream.flush()
    tasks, dealt = _deal(weights)
    children: list[tuple[int, int]] = []
    try:
        children.extend(_fork_worker(function, items, tasks, dealt) for _ in range(workers - 1))
        for index in _taken(tasks, dealt):
            results[index] = function(items[index])
        while children:
            pid, pipe = children.pop(0)
            results.update(_results_of(pid, pipe))
    finally:
        os.close(dealt)
        for pid, pipe in children:  # an error here, or Ctrl-C: no child is left running
            os.close(pipe)
            _end(pid)
    return [results[index] for index in range(len(items))]


def _deal(weights: Sequence[int]) -> tuple[list[list[int]], int]:
    """The tasks (item indexes, the heaviest items first) and the read end of a pipe holding
    their numbers, ``_NUMBER`` bytes each. Its write end is closed: a reader that finds it empty
    is done. More tasks than the pipe holds numbers for are grouped, a few items to a number."""
    import fcntl  # Linux only, as the fork

    order = sorted(range(len(weights)), key=lambda i: -weights[i])
    read_end, write_end = os.pipe()
    try:
        room = fcntl.fcntl(write_end, fcntl.F_GETPIPE_SZ) // _NUMBER
        per_task = -(-len(order) // room)  # ceiling division: the numbers all fit at once
        tasks = [order[i : i + per_task] for i in range(0, len(order), per_task)]
        os.write(write_end, b"".join(n.to_bytes(_NUMBER, "little") for n in range(len(tasks))))
    except BaseException:
        os.close(read_end)
        raise
    finally:
        os.close(write_end)
    return tasks, read_end


def _taken(tasks: list[list[int]], dealt: int) -> Iterator[int]:
    """The item indexes of the tasks this process takes from ``dealt``, one task at a time."""
    while number := os.read(dealt, _NUMBER):
        yield from tasks[int.from_bytes(number, "little")]


def _fork_worker(
    function: Callable[[Item], Result], items: Sequence[Item], tasks: list[list[int]], dealt: int
) -> tuple[int, int]:
    """Start a child that computes the tasks it takes from ``dealt``; returns its pid and the
    pipe its results come on, as (index, result) pairs."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid:
        os.close(write_end)
        return pid, read_end
    status = 0
    try:  # the child: whatever happens, it leaves by os._exit below
        import pickle

        os.close(read_end)
        try:
            done = [(index, function(items[index])) for index in _taken(tasks, dealt)]
            payload = pickle.dumps((True, done), protocol=-1)
        except BaseException as error:  # every error goes back to the parent
            status = 1
            payload = _pickled_error(error)
        with open(write_end, "wb") as pipe:
            pipe.write(payload)
    except BaseException:  # the parent sees a worker that sent nothing
        status = 2
    finally:
        os._exit(status)


class WorkerTraceback(Exception):
    """Where in a worker an error was raised: the cause of the error the parent raises again."""


def _pickled_error(error: BaseException) -> bytes:
    import pickle
    import traceback  # only on an error

    where = "".join(traceback.format_exception(error))
    try:
        return pickle.dumps((False, (error, where)), protocol=-1)
    except Exception:  # an error that cannot be pickled: its text
        text = RuntimeError(f"{type(error).__name__}: {error}")
        return pickle.dumps((False, (text, where)), protocol=-1)


def _results_of(pid: int, pipe: int) -> list[tuple[int, Result]]:
    import pickle

    with open(pipe, "rb") as stream:
        payload = stream.read()
    _, status = os.waitpid(pid, 0)
    try:
        ok, value = pickle.loads(payload)
    except Exception as error:  # a truncated or empty payload
        code = os.waitstatus_to_exitcode(status)
        how = f"signal {-code}" if code < 0 else f"status {code}"
        raise WorkerFailed(f"a check worker ended with {how} and sent no results") from error
    if not ok:
        raised, where = value
        raise raised from WorkerTraceback(f"in a check worker:\n{where}")
    return value  # type: ignore[no-any-return]


def _end(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, 0)

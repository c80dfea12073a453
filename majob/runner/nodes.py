"""The processes of a run's nodes: each in a session of its own, its output kept in a log,
waited for together and stopped together.

Spec-free: the local stage (``local.py``) and the emulator's executor run their nodes here.

A node's output takes one of two ways. With ``LiveOutput`` it is pumped: cut into lines
(``lines.py``: ``\\r`` ends one too, none longer than ``LINE_LIMIT``), each masked, written to
the node's log and handed to a sink as ``[worker-i] line`` while the node runs (the local
stage's merged view). Without it the process writes into its log itself, every byte as it came
(what a ModelArts task log keeps, and what the emulator serves).

Stopping is the same whatever the reason (a failed node, a timeout, Ctrl-C, a terminated job):
SIGTERM to every running node's process group, SIGKILL to what is left after the grace period,
then a sweep of each group: a container ends with its boot process, so nothing a node started
outlives it.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from majob.errors import RunnerError
from majob.masking import Masker
from majob.processes import ProcessRef
from majob.runner.lines import LINE_LIMIT, Line, LineSplitter

TASK_NAME = "worker"  # ModelArts names a job's tasks worker-0, worker-1, ...
STOP_GRACE_SECONDS = 3.0  # SIGTERM, then SIGKILL: a failed run is torn down well within 5 s
POLL_SECONDS = 0.02
TAIL_LINES = 15
PIPE_READ = 64 * 1024  # bytes taken from a node's pipe at a time

LineSink = Callable[[str], None]


@dataclass(frozen=True)
class NodeCommand:
    """How to start one node: ``argv`` (run with ``env``, in ``cwd``). ``shown`` is ``argv`` as
    majob writes it (records, messages): values taken from the environment are ``***``."""

    index: int
    argv: tuple[str, ...]
    env: Mapping[str, str]
    cwd: Path
    shown: tuple[str, ...] = ()

    @property
    def name(self) -> str:
        return f"{TASK_NAME}-{self.index}"


@dataclass(frozen=True)
class LiveOutput:
    """Where pumped lines go: ``sink`` gets each line (one at a time, under ``lock``, shared by
    the nodes of a run) once ``masker`` has hidden the values it knows."""

    sink: LineSink
    masker: Masker = field(default_factory=Masker)
    lock: threading.Lock = field(default_factory=threading.Lock)


class Node:
    """One running node: its process (the leader of its own session) and its log.
    ``start_hint`` is said when the process cannot be started at all."""

    def __init__(
        self,
        command: NodeCommand,
        log: Path,
        live: LiveOutput | None = None,
        *,
        start_hint: str | None = None,
    ) -> None:
        self.command = command
        self.log = log
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)  # the last lines pumped
        self._log_file: IO[bytes] = log.open("ab")
        self._finished = False
        try:
            self.process = subprocess.Popen(
                command.argv,
                cwd=command.cwd,
                env=dict(command.env),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE if live is not None else self._log_file,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            self._log_file.close()
            raise RunnerError(
                f"{command.name} could not start {command.argv[0]}: {error.strerror}",
                hint=start_hint,
            ) from None
        self._reader: threading.Thread | None = None
        if live is None:
            self._log_file.close()  # the process holds its own copy of the descriptor
        else:
            self._reader = threading.Thread(target=self._pump, args=(live,), daemon=True)
            self._reader.start()

    @property
    def exit_code(self) -> int | None:
        return self.process.poll()

    def _pump(self, live: LiveOutput) -> None:
        stream = self.process.stdout
        assert stream is not None
        # Keep a masked value's length past the limit, so a value the cut falls into is still
        # seen whole (and masked) before the line is cut.
        overlap = max((len(v.encode()) for v in live.masker.values), default=0)
        splitter = LineSplitter(LINE_LIMIT + overlap)
        # os.read returns what the pipe holds (at most PIPE_READ) without waiting for more.
        while chunk := os.read(stream.fileno(), PIPE_READ):
            for line in splitter.feed(chunk):
                self._emit(line, live)
        for line in splitter.close():
            self._emit(line, live)

    def _emit(self, line: Line, live: LiveOutput) -> None:
        # A value the run took from the environment is masked before it is kept or shown.
        data = live.masker.raw(line.data)
        dropped = line.dropped + max(0, len(data) - LINE_LIMIT)
        data = data[:LINE_LIMIT]
        mark = f" [majob: line truncated, {dropped} more bytes not kept]" if dropped else ""
        self._log_file.write(data + mark.encode() + line.end)
        self._log_file.flush()
        if not data and line.end == b"\r":
            return  # a bare redraw: the log keeps it, the terminal has nothing to show
        text = data.decode("utf-8", errors="replace") + mark
        self.tail.append(text)
        # A sink that fails (a closed terminal) must not stop the draining of the pipe: the
        # node would block on a full pipe.
        with live.lock, contextlib.suppress(Exception):
            live.sink(f"[{self.command.name}] {text}")

    def signal_group(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):  # the group is gone
            os.killpg(self.process.pid, signum)

    def _wait_group_gone(self, timeout: float = 1.0) -> None:
        """A signal is delivered asynchronously: wait (briefly) until no member of the group is
        left, so that "the run is over" means "no process of it is left"."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                os.killpg(self.process.pid, 0)
            except (ProcessLookupError, PermissionError):
                return
            time.sleep(0.01)

    def finish(self) -> None:
        """Sweep what is left of the group, then wait for the output reader and close the log;
        once (a second sweep could hit a group that took the number since)."""
        if self._finished:
            return
        self._finished = True
        self.signal_group(signal.SIGKILL)
        self._wait_group_gone()
        if self._reader is not None:
            self._reader.join(timeout=5)
            self._log_file.close()
        if self.process.stdout is not None:
            self.process.stdout.close()


@dataclass(frozen=True)
class Outcome:
    """How waiting ended: ``passed`` (every node exited 0), ``failed`` (``node`` exited
    otherwise), ``timeout`` or ``stopped`` (asked to)."""

    status: Literal["passed", "failed", "timeout", "stopped"]
    node: Node | None = None


class NodeGroup:
    """The nodes of one run, started one by one, waited for and stopped together."""

    def __init__(self, live: LiveOutput | None = None, *, start_hint: str | None = None) -> None:
        self.nodes: list[Node] = []
        self._live = live
        self._start_hint = start_hint

    def start(self, command: NodeCommand, log: Path) -> Node:
        node = Node(command, log, self._live, start_hint=self._start_hint)
        self.nodes.append(node)
        return node

    def refs(self) -> list[ProcessRef]:
        """The node processes, as records that stay checkable after this process is gone."""
        return [ProcessRef.of(node.process.pid) for node in self.nodes]

    def wait(
        self,
        *,
        deadline: float | None = None,
        stop: threading.Event | None = None,
        tick: Callable[[], None] | None = None,
    ) -> Outcome:
        """Until every node exits 0, one fails, ``deadline`` (``time.monotonic()``) passes or
        ``stop`` is set; ``tick`` runs between two looks."""
        while True:
            failed = [n for n in self.nodes if n.exit_code not in (None, 0)]
            if failed:
                return Outcome("failed", failed[0])
            if all(n.exit_code == 0 for n in self.nodes):
                return Outcome("passed")
            if deadline is not None and time.monotonic() > deadline:
                return Outcome("timeout")
            if tick is not None:
                tick()
            if stop is None:
                time.sleep(POLL_SECONDS)
            elif stop.wait(POLL_SECONDS):
                return Outcome("stopped")

    def stop(self) -> list[int | None]:
        """SIGTERM every running node's group, SIGKILL what is still there after the grace
        period, sweep every group and close the logs; returns the nodes' exit codes."""
        running = [n for n in self.nodes if n.exit_code is None]
        for node in running:
            node.signal_group(signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for node in running:
            try:
                node.process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                node.signal_group(signal.SIGKILL)
                node.process.wait()
        for node in self.nodes:
            node.finish()
        return [node.process.returncode for node in self.nodes]


@contextlib.contextmanager
def deferred_interrupts() -> Iterator[None]:
    """Ignore SIGINT/SIGTERM for the duration, so that a second Ctrl-C cannot cut a clean-up
    short (main thread only; elsewhere they cannot arrive as exceptions anyway)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for signum, handler in previous.items():
            # None: a handler installed outside Python; the default is the closest we can restore.
            signal.signal(signum, signal.SIG_DFL if handler is None else handler)

"""What the executor watches in a running job besides exit codes: an injected node fault (at
the N-th step line of a node's log, or after some seconds) and hung nodes.

A node is hung when its log has not grown and its processes used no CPU for ``hang_window``
seconds: the documented detection looks at the process's I/O first and then at its accelerator
use, which on this machine's CPU nodes is CPU time (``usage.group_sample``). A script that
sleeps that long is hung by this rule too, as the documentation warns it can be on ModelArts.
Neither measure says whether the node could run: on a loaded machine a process that is
runnable (or waits on the disk) may print nothing and get no CPU for a while, so a node with
such a process is never hung (its state is load-independent, its CPU time is not). An injected
hang's short window is for the node it froze, once frozen; every other node keeps the job's.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections.abc import Sequence
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path

from majob.emulator.modelarts.jobfaults import JobFault
from majob.emulator.modelarts.restarts import JOB_HANGED, NODE_FAULT, Fault
from majob.emulator.modelarts.usage import group_sample

IDLE_CPU_SECONDS = 0.05  # less than this over the window: the node did nothing


class HangDetected(Exception):
    """A node is hung (raised out of the node group's wait)."""

    def __init__(self, fault: Fault) -> None:
        super().__init__(fault.reason)
        self.fault = fault


@dataclass
class _Quiet:
    """Since when a node's log has not grown, and its CPU seconds then."""

    size: int
    since: float
    cpu: float | None = None


class Watchdog:
    """One run's watch over its nodes (``pids``: each node's process group leader, ``logs``:
    each node's log file; ``starts``: where each log stood when its node started, so the step
    lines a node printed before the watch began count too: on a loaded machine a node reaches
    its fault's step before the watch is set up). ``check()`` runs between two looks at the
    nodes."""

    def __init__(
        self,
        logs: Sequence[Path],
        pids: Sequence[int],
        *,
        fault: JobFault | None,
        hang_window: float,
        starts: Sequence[int] | None = None,
    ) -> None:
        self.logs = list(logs)
        self.pids = list(pids)
        self.fault = fault if fault is not None and fault.node < len(pids) else None
        self.hang_window = hang_window
        self.struck: Fault | None = None  # the injected fault, once it struck
        self.warned: set[int] = set()  # hung nodes reported (when no restart follows)
        self.started = time.monotonic()
        self._offsets = list(starts) if starts is not None else [log_size(p) for p in self.logs]
        self._steps = 0
        self._rest = b""
        self._quiet = [_Quiet(size, self.started) for size in self._offsets]

    def check(self) -> Fault | None:
        """Strike the injected fault when due; a hung node's fault (once per node)."""
        if self.fault is not None and self.struck is None and self._due(self.fault):
            self._strike(self.fault)
        return self._hung()

    def final_look(self) -> None:
        """Once the run's nodes are done: a node that reached its fault's step line (or ran
        past its time) and ended before the last check saw it still meets the fault (a fast
        script, or a busy machine, must not outrun the injection)."""
        fault = self.fault
        if fault is None or self.struck is not None:
            return
        if self._due(fault):
            self._strike(fault)

    # -- the injected fault --------------------------------------------------------------------

    def _due(self, fault: JobFault) -> bool:
        if fault.after_seconds is not None:
            return time.monotonic() - self.started >= fault.after_seconds
        assert fault.at_step is not None
        path = self.logs[fault.node]
        with suppress(OSError), path.open("rb") as handle:
            handle.seek(self._offsets[fault.node])
            data = self._rest + handle.read()
            self._offsets[fault.node] = handle.tell()
            *lines, self._rest = data.split(b"\n")
            pattern = re.compile(fault.step_pattern)
            for line in lines:
                if pattern.search(line.decode("utf-8", "replace")):
                    self._steps += 1
                    if self._steps >= fault.at_step:
                        return True
        return False

    def _strike(self, fault: JobFault) -> None:
        when = (
            f"at step line {fault.at_step}"
            if fault.at_step is not None
            else f"{fault.after_seconds:g}s into the run"
        )
        task = f"worker-{fault.node}"
        if fault.node_fault == "dies":
            _signal_group(self.pids[fault.node], signal.SIGKILL)
            self.struck = Fault(NODE_FAULT, task, f"injected fault: the node died {when}")
        else:
            _signal_group(self.pids[fault.node], signal.SIGSTOP)
            self.struck = Fault(JOB_HANGED, task, f"injected fault: the node hung {when}")

    # -- hangs ----------------------------------------------------------------------------------

    def window(self, index: int) -> float:
        """How long node ``index`` must stay quiet to be hung: the injected hang's window for
        the node it froze, the job's otherwise."""
        fault = self.fault
        frozen = (
            fault is not None
            and fault.node == index
            and self.struck is not None
            and self.struck.scenario == JOB_HANGED
        )
        return fault.hang_window if frozen and fault is not None else self.hang_window

    def _hung(self) -> Fault | None:
        now = time.monotonic()
        for index, quiet in enumerate(self._quiet):
            size = log_size(self.logs[index])
            window = self.window(index)
            if size != quiet.size:
                self._quiet[index] = _Quiet(size, now)
                continue
            if now - quiet.since < window / 2 or index in self.warned:
                continue
            if quiet.cpu is not None and now - quiet.since < window:
                continue  # noted halfway: the next look is at the window's end
            sample = group_sample(self.pids[index], now)
            if sample is not None and sample.busy:  # it would run, the machine is slow: wait
                self._quiet[index] = _Quiet(size, now)
                continue
            cpu = sample.cpu_seconds if sample is not None else 0.0
            if quiet.cpu is None:  # halfway: note the CPU time, compare at the window's end
                quiet.cpu = cpu
            elif now - quiet.since >= window:
                if cpu - quiet.cpu < IDLE_CPU_SECONDS:
                    return Fault(
                        JOB_HANGED,
                        f"worker-{index}",
                        f"no output and no CPU use for {window:g}s: the job hangs",
                    )
                self._quiet[index] = _Quiet(size, now, cpu)
        return None


def log_size(path: Path) -> int:
    """How much the log ``path`` holds (0 before it exists)."""
    try:
        return path.stat().st_size
    except OSError:
        return 0


def _signal_group(leader: int, signum: int) -> None:
    with suppress(ProcessLookupError, PermissionError):  # already gone
        os.killpg(leader, signum)

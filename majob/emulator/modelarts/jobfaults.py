"""Injected job faults: a job that fails at a phase, spends a while in one, or loses a node.

Request faults (a status, a reset, latency) are the shared layer's (``majob.emulator.http``);
these act on a job's lifecycle instead, and each job created takes the first rule that still
fires for its name.

A node fault strikes one node of a running job (``node``, 0 by default) when its log has
printed the ``at_step``-th line that matches ``step_pattern`` (a regex), or ``after_seconds``
after its run started: ``node_fault="dies"`` kills the node's processes (as a lost node or a
dead chip would: a hardware-like fault), ``"hangs"`` freezes them (SIGSTOP: no output, no CPU),
which the executor then detects as a hang after ``hang_window`` seconds. It strikes the first
``runs`` runs of the job (a restarted job is a new run; None: every run).
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

PHASES = ("Creating", "Pending", "Running")
NODE_FAULTS = ("dies", "hangs")
DEFAULT_HANG_WINDOW = 1.0  # seconds without output or CPU use before a frozen node is a hang


@dataclass
class JobFault:
    """Jobs whose name matches ``name`` (a regex; None: every job) fail at ``fail_at``
    (Creating, Pending or Running) and/or spend ``delays[phase]`` seconds in a phase. ``count``
    jobs at most (None: no limit)."""

    name: str | None = None
    fail_at: str | None = None
    delays: dict[str, float] = field(default_factory=dict)
    count: int | None = None
    fired: int = 0
    node_fault: str | None = None
    node: int = 0
    at_step: int | None = None
    step_pattern: str = "step"
    after_seconds: float | None = None
    runs: int | None = 1
    hang_window: float = DEFAULT_HANG_WINDOW

    def __post_init__(self) -> None:
        if self.fail_at not in (None, *PHASES):
            raise ValueError("fail_at must be Creating, Pending or Running")
        if not self.fail_at and not self.delays and not self.node_fault:
            raise ValueError("a job fault needs fail_at, delays or node_fault")
        for phase, seconds in self.delays.items():
            if phase not in PHASES or seconds < 0:
                raise ValueError("delays map Creating/Pending/Running to seconds >= 0")
        if self.node_fault is not None:
            self._check_node_fault()

    def _check_node_fault(self) -> None:
        if self.node_fault not in NODE_FAULTS:
            raise ValueError("node_fault must be 'dies' or 'hangs'")
        if (self.at_step is None) == (self.after_seconds is None):
            raise ValueError("a node fault needs at_step or after_seconds (one of them)")
        if self.at_step is not None and self.at_step < 1:
            raise ValueError("at_step counts matching lines from 1")
        if self.after_seconds is not None and self.after_seconds < 0:
            raise ValueError("after_seconds must be >= 0")
        if self.node < 0 or (self.runs is not None and self.runs < 1) or self.hang_window <= 0:
            raise ValueError("node must be >= 0, runs >= 1 (or None), hang_window > 0")
        try:  # a bad regex is refused now, not in the job's thread
            re.compile(self.step_pattern)
        except re.error as error:
            raise ValueError(f"step_pattern {self.step_pattern!r}: {error}") from None

    def strikes_run(self, run: int) -> bool:
        """Whether the node fault strikes the job's ``run``-th run (from 1)."""
        return self.node_fault is not None and (self.runs is None or run <= self.runs)

    def fails_at(self, phase: str) -> bool:
        return self.fail_at == phase

    def delay(self, phase: str) -> float:
        return self.delays.get(phase, 0.0)


class JobFaults:
    """The active job faults; thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._faults: list[JobFault] = []

    def add(self, fault: JobFault) -> JobFault:
        with self._lock:
            self._faults.append(fault)
        return fault

    def clear(self) -> None:
        with self._lock:
            self._faults.clear()

    def all(self) -> list[JobFault]:
        with self._lock:
            return list(self._faults)

    def pick(self, job_name: str) -> JobFault | None:
        """The fault for a new job named ``job_name`` (counted as fired), or None."""
        with self._lock:
            for fault in self._faults:
                if fault.count is not None and fault.fired >= fault.count:
                    continue
                if fault.name is not None and re.search(fault.name, job_name) is None:
                    continue
                fault.fired += 1
                return fault
        return None

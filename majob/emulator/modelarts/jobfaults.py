"""Injected job faults: a job that fails at a phase, or spends a while in one.

Request faults (a status, a reset, latency) are the shared layer's (``majob.emulator.http``);
these act on a job's lifecycle instead, and each job created takes the first rule that still
fires for its name.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass, field

PHASES = ("Creating", "Pending", "Running")


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

    def __post_init__(self) -> None:
        if self.fail_at not in (None, *PHASES):
            raise ValueError("fail_at must be Creating, Pending or Running")
        if not self.fail_at and not self.delays:
            raise ValueError("a job fault needs fail_at or delays")
        for phase, seconds in self.delays.items():
            if phase not in PHASES or seconds < 0:
                raise ValueError("delays map Creating/Pending/Running to seconds >= 0")

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

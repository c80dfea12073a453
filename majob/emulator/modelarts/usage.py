"""What a job's processes use, measured: the samples behind ``GET .../metrics/{task_id}``.

The API documents per-minute averages of ``cpuUsage`` (CPU usage) and ``memUsage`` (physical
memory usage) per task, ``-1`` where a value is not available (reference modelarts.md §2.2; the
API page ShowTrainingJobMetrics). Each node here is a process group on this machine (the node
process leads its own session), so a sample adds up every process of the group from ``/proc``:
its CPU time (children that ended included) and its resident memory. Both are given as a
percentage of what the job's flavor gives one node (its vCPUs, its memory), as a container's
cgroup would count them. The accelerator metrics stay ``-1``: nodes run on the CPU.
Where ``/proc`` is missing (not Linux), nothing is measured and every value is ``-1``.
"""

from __future__ import annotations

import json
import os
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

PROC = Path("/proc")
METRICS = ("cpuUsage", "memUsage", "gpuUtil", "gpuMemUsage", "npuUtil", "npuMemUsage")
MINUTE = 60.0
NOT_AVAILABLE = -1.0
BUSY_STATES = ("R", "D")  # /proc/<pid>/stat states: runnable, waiting on I/O


@dataclass(frozen=True)
class Sample:
    """One look at a node: when (seconds since the job's start), its CPU seconds so far, its
    resident memory (bytes) and whether one of its processes was runnable or in an
    uninterruptible wait (``R`` or ``D``: it wants the CPU or the disk, however slow the machine
    is to give it)."""

    at: float
    cpu_seconds: float
    rss_bytes: int
    busy: bool = False


def group_sample(leader: int, at: float) -> Sample | None:
    """What the process group ``leader`` leads uses now; None when ``/proc`` has none of it."""
    return group_samples([leader], at)[0]


def group_samples(leaders: Sequence[int], at: float) -> list[Sample | None]:
    """``group_sample`` of each leader, from one pass over ``/proc`` (a job's nodes at once)."""
    ticks = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100
    page = os.sysconf("SC_PAGE_SIZE") if hasattr(os, "sysconf") else 4096
    found: dict[int, Sample] = {}
    try:
        entries = os.listdir(PROC)
    except OSError:
        return [None] * len(leaders)
    wanted = set(leaders)
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"{PROC}/{entry}/stat", "rb") as handle:  # plain I/O: ~200 files a look
                text = handle.read().decode("ascii", "replace")
        except OSError:  # ended meanwhile, or not ours to read
            continue
        # The command name (field 2) may hold spaces and parentheses: the rest follows the last ')'.
        fields = text[text.rfind(")") + 2 :].split()
        if len(fields) < 22 or int(fields[2]) not in wanted:  # fields[2]: the process group
            continue
        utime, stime, cutime, cstime = (int(v) for v in fields[11:15])
        before = found.get(int(fields[2]), Sample(at, 0.0, 0))
        found[int(fields[2])] = Sample(
            at,
            before.cpu_seconds + (utime + stime + cutime + cstime) / ticks,
            before.rss_bytes + int(fields[21]) * page,
            before.busy or fields[0] in BUSY_STATES,
        )
    return [found.get(leader) for leader in leaders]


class UsageRecorder:
    """The samples of one job's nodes, and their per-minute averages as the API serves them.

    ``cores`` and ``memory_bytes`` are one node's share (the flavor's); ``path`` keeps the
    averages once the job ends, so they outlive its run (and an emulator restart)."""

    def __init__(self, nodes: int, *, cores: int, memory_bytes: int, path: Path) -> None:
        self._samples: list[list[Sample]] = [[] for _ in range(nodes)]
        self._cores = cores
        self._memory = memory_bytes
        self._path = path
        self._lock = threading.Lock()
        self._started = time.monotonic()

    def sample(self, leaders: Sequence[int]) -> None:
        """One sample of each node's process group, by its leader's pid (a node that has ended
        adds none)."""
        at = time.monotonic() - self._started
        taken = group_samples(leaders[: len(self._samples)], at)
        for index, sample in enumerate(taken):
            if sample is not None:
                self.record(index, sample)

    def record(self, node: int, sample: Sample) -> None:
        """Keep one sample of ``node`` (they come in time order)."""
        with self._lock:
            self._samples[node].append(sample)

    def series(self, node: int) -> dict[str, list[float]]:
        """Each metric's per-minute values for ``node`` (the minute under way included)."""
        with self._lock:
            samples = list(self._samples[node]) if node < len(self._samples) else []
        minutes = int(samples[-1].at // MINUTE) + 1 if samples else 0
        cpu, memory = [], []
        for minute in range(minutes):
            inside = [s for s in samples if minute * MINUTE <= s.at < (minute + 1) * MINUTE]
            before = [s for s in samples if s.at < minute * MINUTE]
            cpu.append(self._cpu_percent(before[-1:] + inside))
            memory.append(self._memory_percent(inside))
        out = {name: [NOT_AVAILABLE] * minutes for name in METRICS}
        out["cpuUsage"], out["memUsage"] = cpu, memory
        return out

    def _cpu_percent(self, samples: list[Sample]) -> float:
        if len(samples) < 2 or samples[-1].at <= samples[0].at:
            return NOT_AVAILABLE  # one look measures no rate
        used = samples[-1].cpu_seconds - samples[0].cpu_seconds
        share = used / (samples[-1].at - samples[0].at) / self._cores
        return round(max(0.0, share) * 100, 2)

    def _memory_percent(self, samples: list[Sample]) -> float:
        if not samples:
            return NOT_AVAILABLE
        mean = sum(s.rss_bytes for s in samples) / len(samples)
        return round(mean / self._memory * 100, 2)

    def save(self) -> None:
        """Write every node's series to ``path`` (JSON, ``{task: {metric: [values]}}``)."""
        data = {f"worker-{i}": self.series(i) for i in range(len(self._samples))}
        # Into the job's directory as it is: a deleted job's is not made again.
        self._path.write_text(json.dumps(data), encoding="utf-8")


def saved_series(path: Path, task: str) -> dict[str, list[float]] | None:
    """``task``'s series as ``UsageRecorder.save`` kept them; None when none were kept."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    found = data.get(task) if isinstance(data, dict) else None
    return found if isinstance(found, dict) else None

"""Step times read back from the nodes' step files (``majob_steps_<R>.jsonl``), per node.

Each line is one optimizer step: ``{"step", "start_ns", "end_ns", "gc_ns", "profiled"}``. Step 0
is left out of the figures (it holds the first batch, allocations and one-off set-up) and so are
the steps the profiler recorded (their time is the profiler's as much as the script's). A line a
killed node left half-written is skipped.
"""

from __future__ import annotations

import re
import statistics
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from majob.perf.step_records import percentile, read_steps
from majob.text import counted

STEP_FILE_GLOB = "majob_steps_*.jsonl"
_WORKER = re.compile(r"^(worker-\d+-rank\d+)")


@dataclass(frozen=True)
class NodeSteps:
    """One node's (process's) step durations in milliseconds, in step order."""

    worker: str
    durations_ms: tuple[float, ...]

    @property
    def p50(self) -> float:
        return percentile(self.durations_ms, 0.50)


@dataclass(frozen=True)
class StepTimes:
    """A run's step times: every node's steps together, and per node."""

    nodes: tuple[NodeSteps, ...]

    @property
    def durations_ms(self) -> list[float]:
        return [d for node in self.nodes for d in node.durations_ms]

    @property
    def p50(self) -> float:
        return percentile(self.durations_ms, 0.50)

    @property
    def p95(self) -> float:
        return percentile(self.durations_ms, 0.95)

    @property
    def count(self) -> int:
        return len(self.durations_ms)


def read_step_file(path: Path) -> list[float]:
    """The counted steps' durations (ms) in one step file."""
    records = read_steps(path).records  # the half-written last line of a killed node skipped
    return [r.seconds * 1e3 for r in records if r.step != 0 and not r.profiled]


def step_times(roots: Iterable[Path]) -> StepTimes | None:
    """Every step file under ``roots``, per worker (its folder's name); None when no step
    was counted."""
    nodes: dict[str, list[float]] = {}
    for root in roots:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob(STEP_FILE_GLOB)):
            match = _WORKER.match(path.parent.name)
            worker = match.group(1) if match else path.parent.name
            nodes.setdefault(worker, []).extend(read_step_file(path))
    found = tuple(NodeSteps(w, tuple(d)) for w, d in sorted(nodes.items()) if d)
    return StepTimes(found) if found else None


def step_time_lines(times: StepTimes | None) -> list[str]:
    """``majob run``'s step time lines: p50 and p95, per node, the slowest against the median."""
    if times is None:
        return []
    line = (
        f"step time p50 {times.p50:.1f} ms, p95 {times.p95:.1f} ms "
        f"({counted(times.count, 'step')}, step 0 and profiled steps left out)"
    )
    if len(times.nodes) == 1:
        return [line]
    per_node = ", ".join(f"{node.worker} {node.p50:.1f}" for node in times.nodes)
    median = statistics.median(node.p50 for node in times.nodes)
    slowest = max(times.nodes, key=lambda node: node.p50)
    ratio = slowest.p50 / median if median else 1.0
    return [
        f"{line}; per node p50: {per_node} ms",
        f"  slowest node: {slowest.worker}, p50 {ratio:.2f}x the median node's",
    ]

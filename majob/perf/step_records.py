"""majob's step records (``majob_steps_<R>.jsonl``): the time of every optimizer step, profiled
or not, and the time the garbage collector took in it.

Each line: ``{"step": i, "start_ns": ..., "end_ns": ..., "gc_ns": ..., "profiled": bool}``
(``perf_counter_ns``). A line cut short (the node killed mid-write) or malformed is skipped
and counted.
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class StepRecord:
    step: int
    start_ns: int
    end_ns: int
    gc_ns: int
    profiled: bool

    @property
    def seconds(self) -> float:
        return (self.end_ns - self.start_ns) / 1e9


@dataclass(frozen=True)
class StepRecords:
    records: tuple[StepRecord, ...]
    skipped: int  # lines that were no step record


def read_steps(path: Path) -> StepRecords:
    records: list[StepRecord] = []
    skipped = 0
    with path.open(encoding="utf-8", errors="replace") as handle:
        for line in handle:
            if not line.strip():
                continue
            record = _record(line)
            if record is None:
                skipped += 1
            else:
                records.append(record)
    return StepRecords(tuple(records), skipped)


def _record(line: str) -> StepRecord | None:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    values = [data.get(k) for k in ("step", "start_ns", "end_ns")]
    ints = [v for v in values if isinstance(v, int) and not isinstance(v, bool)]
    if len(ints) != len(values):
        return None
    step, start, end = ints
    gc = data.get("gc_ns", 0)
    if end < start:
        return None
    return StepRecord(
        step,
        start,
        end,
        gc if isinstance(gc, int) and gc >= 0 else 0,
        bool(data.get("profiled", False)),
    )


def percentile(values: Sequence[float], share: float) -> float:
    """The ``share`` quantile (0..1) of ``values`` by nearest rank: a step that happened, not
    an interpolation between two (NaN when there is none)."""
    ordered = sorted(values)
    if not ordered:
        return math.nan
    rank = max(1, math.ceil(len(ordered) * share))
    return ordered[rank - 1]


def timed_steps(records: Sequence[StepRecord]) -> list[StepRecord]:
    """The steps whose times say how fast training runs: all but the first when there are
    three or more (the first pays for lazy initialisation: allocations, kernels, caches)."""
    return list(records[1:]) if len(records) >= 3 else list(records)


def gc_share(records: Sequence[StepRecord]) -> float:
    """The share of step time spent in the garbage collector: over the profiled steps when
    any is marked, else over every timed step."""
    chosen = [r for r in records if r.profiled] or timed_steps(records)
    total = sum(r.end_ns - r.start_ns for r in chosen)
    return min(sum(r.gc_ns for r in chosen) / total, 1.0) if total > 0 else 0.0

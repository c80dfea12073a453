"""The two runs' loss curves: read, then compared step by step.

Sources, first found wins: the bootstrap's ``loss-rank<R>.jsonl`` in the dump (every rank's
value at a step averaged: under DDP each rank sees its own shard), a ``metrics.json`` holding a
list under ``loss`` (or ``losses``), or ``loss[:= ]<number>`` lines in the logs.
"""

from __future__ import annotations

import json
import math
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from majob.precision.sources import RunDump

LOSS_LINE = re.compile(r"\bloss\b\s*[:=]?\s*(-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)", re.IGNORECASE)


@dataclass(frozen=True)
class SeriesComparison:
    """Where two loss curves part: ``first_beyond`` is the first step whose values differ by more
    than ``rtol * |a| + atol`` (None: they agree on every common step)."""

    a: tuple[float, ...]
    b: tuple[float, ...]
    source_a: str
    source_b: str
    rtol: float
    atol: float
    first_beyond: int | None
    max_abs_diff: float

    @property
    def common(self) -> int:
        return min(len(self.a), len(self.b))


def _from_jsonl(dump_dir: Path) -> list[float]:
    per_step: dict[int, list[float]] = defaultdict(list)
    for path in sorted(dump_dir.glob("loss-rank*.jsonl")):
        seen: dict[int, float] = {}
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
                seen[int(entry["step"])] = float(entry["loss"])  # the last backward of a step
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a killed process
        for step, value in seen.items():
            per_step[step].append(value)
    return [sum(v) / len(v) for _, v in sorted(per_step.items())]


def _from_metrics(files_dir: Path) -> list[float]:
    for path in sorted(files_dir.rglob("metrics.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue
        if isinstance(data, dict):
            values = data.get("loss", data.get("losses"))
            if isinstance(values, list) and all(isinstance(v, (int, float)) for v in values):
                return [float(v) for v in values]
    return []


def _from_logs(logs: tuple[Path, ...]) -> list[float]:
    for log in logs:  # the first node's log: every rank prints the same in most scripts
        values = [
            float(m.group(1))
            for line in log.read_text(encoding="utf-8", errors="replace").splitlines()
            if (m := LOSS_LINE.search(line))
        ]
        if values:
            return values
    return []


def read_loss(run: RunDump) -> tuple[list[float], str]:
    """The run's loss per step and where it came from ("" when none was found)."""
    if run.dump_dir is not None and (values := _from_jsonl(run.dump_dir)):
        return values, "loss-rank*.jsonl"
    if values := _from_metrics(run.files_dir):
        return values, "metrics.json"
    if values := _from_logs(run.logs):
        return values, "logs"
    return [], ""


def compare_series(
    a: list[float], b: list[float], *, rtol: float, atol: float, sources: tuple[str, str]
) -> SeriesComparison:
    first: int | None = None
    worst = 0.0
    for step, (x, y) in enumerate(zip(a, b, strict=False)):
        # NaN (or the same Inf) on both sides is no difference of the curves: compare's NaN/Inf
        # check (nonfinite.py) says where both runs made it.
        same = (x != x and y != y) or (math.isinf(x) and x == y)
        diff = 0.0 if same else abs(x - y) if math.isfinite(x) and math.isfinite(y) else math.inf
        worst = max(worst, diff)
        if first is None and diff > rtol * abs(x) + atol:
            first = step
    return SeriesComparison(tuple(a), tuple(b), *sources, rtol, atol, first, worst)

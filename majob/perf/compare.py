"""``majob perf A B``: two profiles side by side (before and after a change, GPU against NPU):
step times, the breakdown of a step part by part with the difference, and which findings one
has and the other not. The figures of several ranks are their mean."""

from __future__ import annotations

import statistics
from dataclasses import dataclass

from majob.perf.report import Diagnosis, finding_json
from majob.perf.timeline import PARTS


@dataclass(frozen=True)
class Row:
    name: str
    a: float
    b: float

    @property
    def diff(self) -> float:
        return self.b - self.a

    @property
    def ratio(self) -> float | None:
        return self.b / self.a if self.a > 0 else None


@dataclass(frozen=True)
class Comparison:
    a: Diagnosis
    b: Diagnosis
    steps: tuple[Row, ...]  # p50, p95
    parts: tuple[Row, ...]  # ms per step, by part
    gone: tuple[str, ...]  # findings of A that B no longer has
    new: tuple[str, ...]  # findings of B that A did not have


def _mean_over_ranks(diagnosis: Diagnosis, part: str) -> float:
    return statistics.fmean(r.per_step[part] for r in diagnosis.ranks)


def compare(a: Diagnosis, b: Diagnosis) -> Comparison:
    steps = (
        Row("step p50 (ms)", *(statistics.fmean(r.p50 for r in d.ranks) for d in (a, b))),
        Row("step p95 (ms)", *(statistics.fmean(r.p95 for r in d.ranks) for d in (a, b))),
    )
    parts = tuple(Row(p, _mean_over_ranks(a, p), _mean_over_ranks(b, p)) for p in PARTS)
    keys_a = {f.key for f in a.above(0.0)}
    keys_b = {f.key for f in b.above(0.0)}
    return Comparison(
        a,
        b,
        steps,
        parts,
        gone=tuple(f.title for f in a.findings if f.key not in keys_b),
        new=tuple(f.title for f in b.findings if f.key not in keys_a),
    )


def compare_json(comparison: Comparison) -> dict[str, object]:
    def rows(items: tuple[Row, ...]) -> list[dict[str, object]]:
        return [
            {"name": r.name, "a": r.a, "b": r.b, "diff": r.diff, "ratio": r.ratio} for r in items
        ]

    return {
        "a": comparison.a.target,
        "b": comparison.b.target,
        "steps": rows(comparison.steps),
        "breakdown_ms": rows(comparison.parts),
        "findings_gone": list(comparison.gone),
        "findings_new": list(comparison.new),
        "findings_a": [finding_json(f) for f in comparison.a.findings],
        "findings_b": [finding_json(f) for f in comparison.b.findings],
        "partial": {"a": comparison.a.partial, "b": comparison.b.partial},
    }

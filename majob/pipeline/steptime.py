"""Step time across formal runs: a formal run more than ``SLOWER`` (20%) slower, at the median
step, than the last formal run of the same spec and flavor is flagged (``majob history``, the
pipeline's summary). The step times are the ledger's (``step_p50_ms``), from the nodes' step
files (``majob/perf/bootstrap.py``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from majob.pipeline.ledger_schema import StageRecord

SLOWER = 1.2


def formal_flavor(record: StageRecord) -> str:
    """The flavor the formal stage of ``record``'s spec ran on (its override, else the spec's)."""
    spec: dict[str, Any] = dict(record.spec_json)
    override = (spec.get("stages") or {}).get("formal") or {}
    return str(override.get("flavor") or (spec.get("resources") or {}).get("flavor") or "")


def slower_than_last(
    record: StageRecord, formal: Sequence[StageRecord]
) -> tuple[StageRecord, float] | None:
    """The last formal run before ``record`` of its spec and flavor, and how many times slower
    ``record`` is, when it is more than ``SLOWER`` times slower; else None. ``formal``: the
    spec's formal records, newest first."""
    if record.stage != "formal" or not record.passed or not record.step_p50_ms:
        return None
    flavor = formal_flavor(record)
    for earlier in formal:
        if earlier.id >= record.id or not earlier.passed or not earlier.step_p50_ms:
            continue
        if earlier.spec_name != record.spec_name or formal_flavor(earlier) != flavor:
            continue
        ratio = record.step_p50_ms / earlier.step_p50_ms
        return (earlier, ratio) if ratio > SLOWER else None
    return None


def slower_line(record: StageRecord, earlier: StageRecord, ratio: float) -> str:
    """One line saying so."""
    return (
        f"#{record.id} formal is {(ratio - 1) * 100:.0f}% slower per step than #{earlier.id} "
        f"(p50 {record.step_p50_ms:.1f} ms against {earlier.step_p50_ms:.1f} ms, same spec and "
        f"flavor {formal_flavor(record) or '(none)'}): profile it with `--perf`"
    )

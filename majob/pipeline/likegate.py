"""``expect.precision``: does this stage's metric curve follow the earlier stage's recorded run?

The reference is the newest passed run of the stage the gate names (``like``) with the same
spec and code digests: the pipeline's own order gate makes one exist before a later stage
runs. Stage overrides are not in the spec digest, so a debug stage that trains one epoch
where the local one trains eight still compares: the first points of both curves. Each side's
curve is its nodes' mean at each point (under DDP every rank reports its own shard's loss).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, cast

from majob.pipeline.digests import Fingerprint
from majob.pipeline.judge import Outcome, judge_expect
from majob.pipeline.ledger_schema import StageRecord
from majob.pipeline.precision_gates import GateVerdict, save_gate_verdict
from majob.spec.precision_gate import PrecisionGate, applies

if TYPE_CHECKING:
    from majob.pipeline.record import StageRecorder
    from majob.spec.models import JobSpec, Stage

Series = Mapping[str, Mapping[str, Sequence[float]]]


def mean_curve(series: Series, metric: str) -> list[float]:
    """The nodes' mean of ``metric`` at each point every node reported."""
    curves = [list(by_name[metric]) for by_name in series.values() if by_name.get(metric)]
    if not curves:
        return []
    points = min(len(curve) for curve in curves)
    return [sum(curve[i] for curve in curves) / len(curves) for i in range(points)]


def first_parting(
    reference: Sequence[float], this: Sequence[float], rtol: float, steps: int | None
) -> tuple[int, int | None]:
    """How many points were compared, and the first whose relative difference passes
    ``rtol`` (a NaN or an infinity on one side only parts the curves there)."""
    compared = min(len(reference), len(this), steps if steps is not None else math.inf)
    count = int(compared)
    for i in range(count):
        a, b = reference[i], this[i]
        if math.isfinite(a) != math.isfinite(b) or (math.isnan(a) != math.isnan(b)):
            return count, i
        if math.isfinite(a) and abs(b - a) > rtol * max(abs(a), 1e-12):
            return count, i
    return count, None


def reference_run(
    records: Sequence[StageRecord], like: str, spec_digest: str, code_digest: str
) -> StageRecord | None:
    """The newest passed ``like`` run of this spec and code (``records`` newest first)."""
    return next(
        (
            r
            for r in records
            if r.stage == like
            and r.passed
            and r.spec_digest == spec_digest
            and r.code_digest == code_digest
        ),
        None,
    )


def judge_like(
    gate: PrecisionGate,
    stage: str,
    series: Series,
    reference: StageRecord | None,
    code_digest: str,
) -> GateVerdict:
    """The gate's verdict on ``stage``'s ``series`` against the ``reference`` run."""
    where = f"expect.precision: {stage} against {gate.like}"
    base = GateVerdict(stage, gate.like, gate.metric, "failed", code_digest=code_digest)
    if reference is None:
        detail = (
            f"{where}: no passed {gate.like} run of this spec and code is in the ledger; "
            f"run the {gate.like} stage first"
        )
        return replace(base, verdict="no reference", detail=detail)
    ref = replace(base, reference_id=reference.id)
    before, now = mean_curve(reference.metrics, gate.metric), mean_curve(series, gate.metric)
    missing = [name for name, curve in ((gate.like, before), (stage, now)) if not curve]
    if missing:
        detail = f"{where}: no {gate.metric} values in the log of {' and '.join(missing)}"
        return replace(ref, detail=detail)
    compared, parted = first_parting(before, now, gate.loss_rtol, gate.steps)
    if parted is not None:
        a, b = before[parted], now[parted]
        detail = (
            f"{where}: the {gate.metric} curves part at point {parted + 1} of {compared}: "
            f"{gate.like} {a:.6g}, {stage} {b:.6g} ({_relative(a, b)} > loss_rtol "
            f"{gate.loss_rtol:g})"
        )
        return replace(ref, compared=compared, parted_at=parted, detail=detail)
    detail = f"{where}: {gate.metric} within loss_rtol {gate.loss_rtol:g} at all {compared} points"
    return replace(ref, verdict="passed", compared=compared, detail=detail)


def _relative(a: float, b: float) -> str:
    if not (math.isfinite(a) and math.isfinite(b)):
        return "not finite"
    return f"{abs(b - a) / max(abs(a), 1e-12):.1%} apart"


def apply_like_gate(
    gate: PrecisionGate | None,
    stage: str,
    outcome: Outcome,
    records: Sequence[StageRecord],
    fingerprint: Fingerprint,
) -> tuple[Outcome, GateVerdict | None]:
    """``outcome`` failed when ``gate`` checks ``stage`` and its curve parts from the
    reference's (or there is none), with the verdict; a failed outcome is left as it is."""
    if gate is None or not applies(gate, stage) or not outcome.passed:
        return outcome, None
    reference = reference_run(records, gate.like, fingerprint.spec_digest, fingerprint.code_digest)
    verdict = judge_like(gate, stage, outcome.metrics, reference, fingerprint.code_digest)
    if verdict.passed:
        return outcome, verdict
    return replace(outcome, passed=False, reason=verdict.detail), verdict


def judge_checks(
    spec: JobSpec, stage: str, outcome: Outcome, recorder: StageRecorder
) -> tuple[Outcome, GateVerdict | None]:
    """``outcome`` with the stage's ``expect:`` (its own keys over the spec's) and its
    ``expect.precision`` gate applied: what the pipeline and ``submit --wait`` judge alike."""
    staged = spec.at_stage(cast("Stage", stage))
    outcome = judge_expect(staged.expect, outcome)
    records = recorder.ledger.records(recorder.spec_name)
    return apply_like_gate(staged.expect.precision, stage, outcome, records, recorder.fingerprint)


def keep_verdict(
    recorder: StageRecorder, gate: GateVerdict | None, report: Callable[[str], object]
) -> None:
    """Record ``gate``'s verdict on the recorder's (finished) record and report it."""
    if gate is not None:
        judged = replace(gate, record_id=recorder.record_id or 0)
        save_gate_verdict(recorder.ledger, recorder.spec_name, judged)
        report(f"[majob] {gate.detail}")

"""Did a restarted run resume? Read from the metric series of three runs: the uninterrupted one
(the reference), the one a fault killed and its restart.

Where the restart began, from worker-0's series (every example logs there):

* a progress metric (named ``step``, ``epoch``, ``iter``...): its first value after the restart.
  A run that resumed continues the count (``epoch 3``); one that ignored its checkpoints logs
  the reference's first value again (``epoch 0``).
* otherwise the first metric the spec defines, by length: the restart logged M points where the
  uninterrupted run logged N, so it began at point N - M (0: it did everything again). Counting
  points is immune to the small numeric differences a resumed run may show; the restart's first
  value is also compared with the reference's value at that point, and the report says whether
  they agree.

The final metrics match when each metric's last value on worker-0 is within ``tolerance``
(relative to the reference's value; a value of 0 needs an exact match) of the reference's.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from majob.pipeline.metrics import Series
from majob.runner.faults import PROGRESS_NAMES

CHIEF = "worker-0"
DEFAULT_TOLERANCE = 0.05


@dataclass(frozen=True)
class FinalMetric:
    """One metric's last value after the restart and in the uninterrupted run."""

    name: str
    restarted: float | None
    reference: float | None
    tolerance: float

    @property
    def matches(self) -> bool:
        if self.restarted is None or self.reference is None:
            return False
        return abs(self.restarted - self.reference) <= self.tolerance * abs(self.reference)


@dataclass(frozen=True)
class ResumeVerdict:
    """``resumed``: True, False, or None when the logs cannot tell; ``began``: where the
    restart began, as the report says it (``epoch 3``, ``point 4 of loss``); ``how``: how that
    was read."""

    resumed: bool | None
    began: str
    how: str
    finals: tuple[FinalMetric, ...]

    @property
    def final_matches(self) -> bool:
        return bool(self.finals) and all(final.matches for final in self.finals)


def _chief(series: Series) -> Mapping[str, list[float]]:
    return series.get(CHIEF, {})


def judge_resume(
    metrics: Mapping[str, str],
    reference: Series,
    restarted: Series,
    tolerance: float = DEFAULT_TOLERANCE,
) -> ResumeVerdict:
    """The verdict on ``restarted`` against the uninterrupted run's ``reference`` series."""
    ref, after = _chief(reference), _chief(restarted)
    finals = tuple(
        FinalMetric(
            name,
            after[name][-1] if after.get(name) else None,
            ref[name][-1] if ref.get(name) else None,
            tolerance,
        )
        for name in metrics
    )
    progress = next((name for name in metrics if name.lower() in PROGRESS_NAMES), None)
    if progress is not None and after.get(progress) and ref.get(progress):
        return _by_progress(progress, ref[progress], after[progress], finals)
    counted = next((name for name in metrics if after.get(name) and ref.get(name)), None)
    if counted is not None:
        return _by_length(counted, ref[counted], after[counted], finals, tolerance)
    how = (
        "the spec has no `metrics:`"
        if not metrics
        else "no metric was logged by worker-0 both after the restart and uninterrupted"
    )
    return ResumeVerdict(None, "unknown", f"cannot tell: {how}", finals)


def _by_progress(
    name: str, ref: list[float], after: list[float], finals: tuple[FinalMetric, ...]
) -> ResumeVerdict:
    first, origin = after[0], ref[0]
    how = (
        f"the first {name} logged after the restart is {first:g}; the uninterrupted run "
        f"began at {origin:g}"
    )
    return ResumeVerdict(first > origin, f"{name} {first:g}", how, finals)


def _by_length(
    name: str,
    ref: list[float],
    after: list[float],
    finals: tuple[FinalMetric, ...],
    tolerance: float,
) -> ResumeVerdict:
    began = max(0, len(ref) - len(after))
    how = (
        f"{name}: {len(after)} points after the restart, {len(ref)} uninterrupted, so it "
        f"began at point {began}"
    )
    expected = ref[began]
    agrees = abs(after[0] - expected) <= tolerance * abs(expected)
    how += (
        f"; its first value {after[0]:g} "
        + ("agrees with" if agrees else "differs from")
        + f" the uninterrupted run's there ({expected:g})"
    )
    return ResumeVerdict(began > 0, f"point {began} of {name}", how, finals)

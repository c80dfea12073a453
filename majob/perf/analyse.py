"""majob's own step analysis of one rank's profile, on any trace (CPU, GPU or NPU host side).

From the trace (``timeline``): each profiled step's parts. From majob's step records
(``steps``): the time of every step, profiled or not (p50, p95), and the garbage collector's
share, which is placed in each profiled step's host gaps (where Python runs; inferred: the
trace has no GC events). A profiled step more than ``OUTLIER`` times the median (the first
one pays for the profiler's start, lazy initialisation) is left out of the shares, and said so.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass, field

from majob.errors import UserInputError
from majob.perf.layout import RankDir
from majob.perf.step_records import StepRecord, gc_share, percentile, read_steps, timed_steps
from majob.perf.timeline import PARTS, Step, Timeline
from majob.perf.trace import ReadState, iter_events

OUTLIER = 3.0
TOP_OPS = 10


@dataclass(frozen=True)
class TopOp:
    name: str
    count: int
    self_ms: float
    share: float  # of the profiled steps' time


@dataclass
class RankProfile:
    """What one rank's profile says (times in milliseconds, shares 0..1)."""

    label: str
    node: int | None
    rank: int | None
    device: str
    steps: list[Step]
    left_out: list[int]  # profiled step numbers left out as outliers
    step_ms: list[float]  # the timed steps' times, in order
    step_source: str  # "majob_steps" or "trace"
    per_step: dict[str, float]  # mean milliseconds per profiled step, by part
    # the median step's milliseconds by part, host gaps those every step has (``recurring_gaps``)
    typical: dict[str, float]
    top_ops: list[TopOp]
    partial: list[str] = field(default_factory=list)
    events: int = 0
    loader: str = ""
    optimizer: str = ""
    multi_tensor: bool = False
    device_busy: float | None = None  # share of step time the device ran kernels

    @property
    def p50(self) -> float:
        return percentile(self.step_ms, 0.5)

    @property
    def p95(self) -> float:
        return percentile(self.step_ms, 0.95)

    @property
    def step_mean(self) -> float:
        return sum(self.per_step.values())

    def share(self, part: str) -> float:
        total = self.step_mean
        return self.per_step.get(part, 0.0) / total if total > 0 else 0.0

    def mean(self, attribute: str) -> float:
        """The median over the kept steps of a ``Step`` counter (``small_ops``, ``syncs``...)."""
        values = [float(getattr(s, attribute)) for s in self.steps]
        return statistics.median(values) if values else 0.0


def analyse_rank(rank_dir: RankDir) -> RankProfile:
    """One rank's profile; ``UserInputError`` when it has no usable trace or no step."""
    if rank_dir.trace is None:
        raise UserInputError(f"{rank_dir.path}: no trace (ASCEND_PROFILER_OUTPUT/trace_view.json)")
    state = ReadState(rank_dir.trace)
    timeline = Timeline()
    for event in iter_events(state):
        timeline.add(event)
    if state.events == 0:
        why = state.cut or "it holds no event"
        raise UserInputError(f"{rank_dir.trace}: not a usable trace: {why}")
    steps = [s for s in timeline.finish(state.cut is not None) if s.ops > 0]
    partial = _partial(rank_dir, state)
    records: tuple[StepRecord, ...] = ()
    if rank_dir.steps_file is not None:
        read = read_steps(rank_dir.steps_file)
        records = read.records
        if read.skipped:
            partial.append(f"{read.skipped} line(s) of {rank_dir.steps_file.name} unreadable")
    if not steps:
        cut = f"; read up to a cut: {state.cut}" if state.cut else ""
        raise UserInputError(
            f"{rank_dir.label}: no optimizer step in the profile ({state.events} events, no "
            f"ProfilerStep#N with operators in it{cut})",
            hint="majob perf analyses training steps: does the script call optimizer.step()? "
            "(a profile taken by time window has no step to break down)",
        )
    kept, left_out = _without_outliers(steps)
    _place_gc(kept, gc_share(records) if records else 0.0)
    timed = timed_steps(records)
    step_ms = [r.seconds * 1e3 for r in timed] or [s.dur / 1e3 for s in kept]
    per_step = {p: sum(s.parts[p] for s in kept) / len(kept) / 1e3 for p in PARTS}
    typical = {p: statistics.median(s.parts[p] for s in kept) / 1e3 for p in PARTS}
    # the recurring gaps, less what the collector took out of them: a collection that runs
    # at the same place in every step is a recurring gap too, and is already the gc part
    after_gc = statistics.median(s.parts["host"] for s in kept)
    typical["host"] = min(recurring_gaps(kept), after_gc) / 1e3
    info = rank_dir.info or {}
    return RankProfile(
        label=rank_dir.label,
        node=rank_dir.node,
        rank=rank_dir.rank,
        device=str(info.get("device") or ("gpu/npu" if timeline.device_seen else "cpu")),
        steps=kept,
        left_out=left_out,
        step_ms=step_ms,
        step_source="majob_steps" if timed else "trace",
        per_step=per_step,
        typical=typical,
        top_ops=_top_ops(timeline, sum(s.dur for s in steps)),
        partial=partial,
        events=state.events,
        loader=next((s.loader for s in kept if s.loader), ""),
        optimizer=next((s.optimizer for s in kept if s.optimizer), ""),
        multi_tensor=any(s.multi_tensor for s in kept),
        device_busy=sum(s.device_busy for s in kept) / sum(s.dur for s in kept)
        if timeline.device_seen
        else None,
    )


def recurring_gaps(steps: list[Step]) -> float:
    """The host gaps (us) that every step has at the same place: between the same two
    operators, the same time in the step. Python code between operators recurs in each step;
    a stall of the machine (another process on the core) falls anywhere."""
    places: list[dict[tuple[str, str, int], float]] = []
    for step in steps:
        seen: dict[tuple[str, str], int] = {}
        place: dict[tuple[str, str, int], float] = {}
        for before, after, gap in step.long_gaps:
            count = seen.get((before, after), 0)
            seen[(before, after)] = count + 1
            place[(before, after, count)] = gap
        places.append(place)
    common = set(places[0]).intersection(*places[1:]) if places else set()
    return sum(min(place[key] for place in places) for key in common)


def _partial(rank_dir: RankDir, state: ReadState) -> list[str]:
    """Why this rank's profile may not be whole."""
    reasons: list[str] = []
    info = rank_dir.info
    if info is None:
        reasons.append("no profiler_info file (the process was killed before it finished?)")
    elif info.get("complete") is False:
        reasons.append(f"collection stopped early (reason: {info.get('reason', 'unknown')})")
    if state.cut is not None:
        reasons.append(f"trace read up to event {state.events}: {state.cut}")
    return reasons


def _without_outliers(steps: list[Step]) -> tuple[list[Step], list[int]]:
    median = statistics.median(s.dur for s in steps)
    kept = [s for s in steps if s.dur <= OUTLIER * median]
    return kept, [s.number for s in steps if s.dur > OUTLIER * median]


def _place_gc(steps: list[Step], share: float) -> None:
    """The collector's share of each step, taken out of its host gaps, then its dispatch
    gaps (where Python, and so the collector, runs)."""
    if share <= 0:
        return
    for step in steps:
        left = share * step.dur
        for part in ("host", "dispatch"):
            moved = min(left, step.parts[part])
            step.parts[part] -= moved
            step.parts["gc"] += moved
            left -= moved


def _top_ops(timeline: Timeline, total_us: float) -> list[TopOp]:
    ranked = sorted(timeline.ops.items(), key=lambda item: -item[1].self_us)[:TOP_OPS]
    return [
        TopOp(name, stat.count, stat.self_us / 1e3, stat.self_us / total_us if total_us else 0.0)
        for name, stat in ranked
    ]

"""Profiles built by hand for the diagnosis tests: the Ascend PyTorch profiler layout majob's
collection side writes (``profiling/worker-<N>-rank<R>_<ts>_ascend_pt/``), with a Chrome trace
of events placed where the test wants them (microseconds), majob's step records and the
profiler info."""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

Event = dict[str, Any]


def op(name: str, ts: float, dur: float, *, tid: int = 1, cat: str = "cpu_op") -> Event:
    return {"ph": "X", "cat": cat, "name": name, "pid": 1, "tid": tid, "ts": ts, "dur": dur}


@dataclass
class StepPlan:
    """One step: its parts in order, each (event name, duration) with a gap after it."""

    parts: Sequence[tuple[str, float]]
    gap: float = 5.0
    nested: Sequence[tuple[int, str, float]] = ()  # (index of a part, child name, duration)
    other_thread: Sequence[tuple[str, float, float]] = field(default_factory=tuple)


def step_events(plans: Sequence[StepPlan], start: float = 1000.0) -> list[Event]:
    events: list[Event] = []
    t = start
    for number, plan in enumerate(plans):
        length = sum(d + plan.gap for _, d in plan.parts)
        events.append(op(f"ProfilerStep#{number}", t, length, cat="user_annotation"))
        at = t
        for index, (name, dur) in enumerate(plan.parts):
            events.append(op(name, at, dur))
            inner = at + 1  # the children one after the other
            for parent, child, child_dur in plan.nested:
                if parent == index:
                    events.append(op(child, inner, child_dur))
                    inner += child_dur + 1
            at += dur + plan.gap
        for name, offset, dur in plan.other_thread:
            events.append(op(name, t + offset, dur, tid=2))
        t += length
    return events


def write_rank(
    root: Path,
    events: Sequence[Event],
    *,
    rank: int = 0,
    node: int = 0,
    steps: Sequence[tuple[int, int, int]] | None = None,  # (start_ns, end_ns, gc_ns)
    info: dict[str, Any] | None = None,
    array: bool = False,
) -> Path:
    folder = root / "profiling" / f"worker-{node}-rank{rank}_20261206220000_ascend_pt"
    (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    body: Any = list(events) if array else {"schemaVersion": 1, "traceEvents": list(events)}
    (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text(json.dumps(body))
    if info is not False:
        data = {
            "rank_id": rank,
            "node": node,
            "device": "cpu",
            "torch": "2.13.0",
            "config": {},
            "steps": [0, 9],
            "complete": True,
            "reason": "exit",
        }
        data.update(info or {})
        (folder / f"profiler_info_{rank}.json").write_text(json.dumps(data))
    if steps is not None:
        lines = [
            json.dumps({"step": i, "start_ns": s, "end_ns": e, "gc_ns": g, "profiled": True})
            for i, (s, e, g) in enumerate(steps)
        ]
        (folder / f"majob_steps_{rank}.jsonl").write_text("\n".join(lines) + "\n")
    return folder


@pytest.fixture
def plain_profile(tmp_path: Path) -> Callable[..., Path]:
    """A profile of ``steps`` steps that each wait ``data`` us for data (the rest: forward,
    backward, optimizer of fixed lengths)."""

    def make(data: float = 100.0, steps: int = 6, rank: int = 0, node: int = 0) -> Path:
        plan = StepPlan(
            [
                ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", data),
                ("aten::linear", 400.0),
                ("autograd::engine::evaluate_function: AddmmBackward0", 400.0),
                ("Optimizer.step#SGD.step", 100.0),
            ]
        )
        write_rank(tmp_path, step_events([plan] * steps), rank=rank, node=node)
        return tmp_path

    return make

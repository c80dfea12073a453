"""Where each profiled step's time goes, read from the trace's events in one pass.

A step is a ``ProfilerStep#N`` event (torch.profiler's ``step()``; majob's bootstrap calls it
from the optimizer's ``step()``), on the thread that ran it: the main thread. Each event
directly under a step is put in one part:

- ``data``: ``enumerate(DataLoader)#...__next__`` (the loader's ``__getitem__`` and collation);
- ``optimizer``: ``Optimizer.step#...`` and ``Optimizer.zero_grad#...``;
- ``backward``: the autograd engine's events (``autograd::engine::evaluate_function: ...``);
- ``sync``: a host-device synchronisation (``aten::item``, ``aten::_local_scalar_dense``,
  ``aten::is_nonzero``, ``*Synchronize*``), wherever it is nested (its time is taken out of
  the part it is in);
- ``forward``: every other operator (the forward pass, the loss, metrics);
- the time between those events: ``dispatch`` when a gap is shorter than ``DISPATCH_GAP_US``
  (Python issuing the next operator), ``host`` when longer (Python code that runs no operator).

Autograd events on another thread (the device's backward thread on a GPU) count as backward
time of the step they fall in, taken out of its host gaps at the end; device kernels (``kernel``,
``gpu_memcpy``...) give the device's busy time per step. Self time per operator name is kept
for every operator of the trace.
"""

from __future__ import annotations

import bisect
from dataclasses import dataclass, field
from typing import Any

from majob.perf.trace import number

DISPATCH_GAP_US = 50.0  # a shorter gap between two operators is the host issuing the next one
SMALL_OP_US = 50.0  # an operator shorter than this is dominated by its dispatch cost
PARTS = ("data", "forward", "backward", "optimizer", "sync", "gc", "dispatch", "host")
DEVICE_CATEGORIES = ("kernel", "gpu_memcpy", "gpu_memset")
_SYNC_NAMES = ("aten::item", "aten::_local_scalar_dense", "aten::is_nonzero")
_OP_CATEGORIES = ("cpu_op", "kernel", "gpu_memcpy", "gpu_memset", "cuda_runtime", "")


def is_sync(name: str) -> bool:
    return name in _SYNC_NAMES or "ynchronize" in name


def part_of(name: str) -> str:
    """The part an event directly under a step belongs to."""
    if name.startswith("enumerate(DataLoader)"):
        return "data"
    if name.startswith(("Optimizer.step#", "Optimizer.zero_grad#")):
        return "optimizer"
    if name.startswith("autograd::engine::") or name == "torch::autograd::AccumulateGrad":
        return "backward"
    if is_sync(name):
        return "sync"
    return "forward"


@dataclass
class Step:
    """One profiled step: its parts in microseconds and what the rules need to know."""

    number: int
    start: float
    dur: float
    parts: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PARTS, 0.0))
    ops: int = 0  # operators directly under the step
    small_ops: int = 0  # ... of them forward/backward ones shorter than SMALL_OP_US
    small_time: float = 0.0
    syncs: int = 0
    optimizer_ops: int = 0
    multi_tensor: bool = False  # the optimizer ran _foreach_/_fused_ kernels
    loader: str = ""  # the DataLoader iterator class, e.g. _SingleProcessDataLoaderIter
    optimizer: str = ""  # e.g. SGD
    device_busy: float = 0.0
    other_backward: float = 0.0  # autograd time on other threads (taken out of host gaps)
    # (operator before, operator after, us) of each gap over DISPATCH_GAP_US
    long_gaps: list[tuple[str, str, float]] = field(default_factory=list)

    @property
    def long_gap_count(self) -> int:
        return len(self.long_gaps)

    @property
    def end(self) -> float:
        return self.start + self.dur


@dataclass
class _Open:
    start: float
    end: float
    name: str
    part: str
    child: float = 0.0
    in_sync: bool = False
    counted: bool = True


@dataclass
class OpStat:
    count: int = 0
    self_us: float = 0.0
    total_us: float = 0.0


class Timeline:
    """Feed it the trace's events in file order (``add``), then ``finish``."""

    def __init__(self) -> None:
        self.steps: list[Step] = []
        self.ops: dict[str, OpStat] = {}
        self.main: tuple[object, object] | None = None
        self.out_of_order = 0
        self._stacks: dict[tuple[object, object], list[_Open]] = {}
        self._last_ts: dict[tuple[object, object], float] = {}
        self._step: Step | None = None
        self._cursor = 0.0  # where the current step's last direct child ended
        self._previous = ""  # ... and its name
        self._last: tuple[str, float, float, bool] = ("", 0.0, 0.0, False)  # part, dur, gap, small
        self._other_backward: list[tuple[float, float]] = []
        self._device: list[tuple[float, float]] = []
        self.device_seen = False
        self._starts: list[float] = []

    def add(self, event: dict[str, Any]) -> None:
        if event.get("ph") != "X":
            return
        ts, dur = number(event.get("ts")), number(event.get("dur"))
        if ts is None or dur is None or dur < 0:
            return
        name = str(event.get("name", ""))
        cat = str(event.get("cat", ""))
        if cat in DEVICE_CATEGORIES:
            self.device_seen = True
            self._place(ts, dur, self._device)
        if cat == "python_function":
            return  # with_stack's Python frames: transparent, the operators inside them count
        thread = (event.get("pid"), event.get("tid"))
        if name.startswith("ProfilerStep#") and self.main in (None, thread):
            self.main = thread
        last = self._last_ts.get(thread)
        if last is not None and ts < last:
            self.out_of_order += 1
        self._last_ts[thread] = ts if last is None else max(last, ts)
        stack = self._stacks.setdefault(thread, [])
        self._close_until(stack, ts)
        if thread == self.main:
            self._on_main(stack, name, cat, ts, dur)
        else:
            if not stack and part_of(name) == "backward":
                self._place(ts, dur, self._other_backward)
            self._push(stack, name, cat, ts, dur, "", False)

    def _push(
        self, stack: list[_Open], name: str, cat: str, ts: float, dur: float, part: str, sync: bool
    ) -> None:
        if stack:
            stack[-1].child += dur
        counted = cat in _OP_CATEGORIES and not name.startswith("ProfilerStep#")
        stack.append(_Open(ts, ts + dur, name, part, in_sync=sync, counted=counted))
        stat = self.ops.setdefault(name, OpStat()) if counted else None
        if stat is not None:
            stat.count += 1
            stat.total_us += dur

    def _close_until(self, stack: list[_Open], ts: float) -> None:
        while stack and stack[-1].end <= ts:
            self._pop(stack)

    def _pop(self, stack: list[_Open]) -> None:
        done = stack.pop()
        if done.counted:
            self.ops[done.name].self_us += max(done.end - done.start - done.child, 0.0)

    def _on_main(self, stack: list[_Open], name: str, cat: str, ts: float, dur: float) -> None:
        if name.startswith("ProfilerStep#"):
            self._close_step()
            while stack:
                self._pop(stack)
            digits = name[len("ProfilerStep#") :]
            self._step = Step(int(digits) if digits.isdigit() else len(self.steps), ts, dur)
            self._cursor = ts
            self._previous = "(start of step)"
            self._last = ("", 0.0, 0.0, False)
            self._push(stack, name, cat, ts, dur, "step", False)
            return
        step = self._step
        if step is None or not stack or ts >= step.start + step.dur:
            self._push(stack, name, cat, ts, dur, "", False)
            return
        if len(stack) == 1:
            self._direct_child(step, name, ts, dur)
            part = part_of(name)
            self._push(stack, name, cat, ts, dur, part, part == "sync")
            return
        parent = stack[-1]
        sync = is_sync(name) and not parent.in_sync
        if sync:
            step.parts["sync"] += dur
            step.parts[parent.part] -= dur
            step.syncs += 1
        if parent.name.startswith("Optimizer.step#") and len(stack) == 2:
            step.optimizer_ops += 1
            step.multi_tensor |= "_foreach_" in name or "_fused_" in name
        self._push(stack, name, cat, ts, dur, parent.part, sync or parent.in_sync)

    def _direct_child(self, step: Step, name: str, ts: float, dur: float) -> None:
        """An event directly under the step: its part, the gap before it, the counts."""
        part = part_of(name)
        gap = ts - self._cursor
        self._gap(step, gap, name, "sync" if part == "sync" else "dispatch")
        self._previous = name
        dur = max(min(ts + dur, step.end) - ts, 0.0)  # a hook's prof.step() ends it early
        self._cursor = max(self._cursor, ts + dur)
        step.parts[part] += dur
        step.ops += 1
        if part == "sync":
            step.syncs += 1
            if 0 <= gap < DISPATCH_GAP_US:
                self._producer_to_sync(step)
        elif part == "data" and not step.loader:
            step.loader = name.rsplit("#", 1)[-1].split(".", 1)[0]
        elif name.startswith("Optimizer.step#") and not step.optimizer:
            step.optimizer = name.split("#", 1)[1].split(".", 1)[0]
        small = part in ("forward", "backward") and dur < SMALL_OP_US
        if small:
            step.small_ops += 1
            step.small_time += dur
        self._last = (part, dur, gap, small)

    def _producer_to_sync(self, step: Step) -> None:
        """The small operator right before a sync made the value it reads (``x[i]`` of
        ``x[i].item()``): it and the gap before it are the sync's cost, not the forward's."""
        part, dur, gap, small = self._last
        if not small or part != "forward":
            return
        step.parts["forward"] -= dur
        step.small_ops -= 1
        step.small_time -= dur
        moved = gap if 0 < gap < DISPATCH_GAP_US else 0.0
        step.parts["dispatch"] -= moved
        step.parts["sync"] += dur + moved
        self._last = ("sync", 0.0, 0.0, False)

    def _gap(self, step: Step, gap: float, after: str, short: str = "dispatch") -> None:
        """A gap before a direct child: a short one is the host issuing it (``short``: a
        sync's issuing belongs to the sync), a long one Python doing something else."""
        if gap <= 0:
            return
        if gap < DISPATCH_GAP_US:
            step.parts[short] += gap
        else:
            step.parts["host"] += gap
            step.long_gaps.append((self._previous, after, gap))

    def _close_step(self) -> None:
        step = self._step
        if step is not None:
            self._gap(step, step.start + step.dur - self._cursor, "(end of step)")
            self.steps.append(step)
        self._step = None

    def finish(self, cut: bool) -> list[Step]:
        """The steps, with other threads' backward and the device's kernels placed; a step
        still open at a cut (its end never written) is dropped."""
        if cut:
            self._step = None
        self._close_step()
        for stack in self._stacks.values():
            while stack:
                self._pop(stack)
        self._starts = [s.start for s in self.steps]
        for pending, credit in ((self._other_backward, _backward), (self._device, _busy)):
            for ts, dur in pending:
                step = self._containing(ts)
                if step is not None:
                    credit(step, dur)
            pending.clear()
        for step in self.steps:
            moved = min(step.other_backward, step.parts["host"])
            step.parts["backward"] += moved
            step.parts["host"] -= moved
        return self.steps

    def _place(self, ts: float, dur: float, pending: list[tuple[float, float]]) -> None:
        """Credit an event of another thread (or the device) to the step it falls in, now
        when that step is known, else later (``finish``): memory stays bounded by the events
        that run ahead of the main thread's in the file."""
        credit = _busy if pending is self._device else _backward
        current = self._step
        if current is not None and current.start <= ts < current.start + current.dur:
            credit(current, dur)
        elif self.steps and ts < (current.start if current is not None else self.steps[-1].end):
            if len(self._starts) != len(self.steps):
                self._starts = [s.start for s in self.steps]
            step = self._containing(ts)
            if step is not None:
                credit(step, dur)
        else:
            pending.append((ts, dur))

    def _containing(self, ts: float) -> Step | None:
        index = bisect.bisect_right(self._starts, ts) - 1
        if index < 0 or index >= len(self.steps):
            return None
        step = self.steps[index]
        return step if ts < step.start + step.dur else None


def _busy(step: Step, dur: float) -> None:
    step.device_busy = min(step.device_busy + dur, step.dur)


def _backward(step: Step, dur: float) -> None:
    step.other_backward += dur

"""The spec's ``perf:`` block: what ``--perf`` profiles (``majob run|submit|pipeline --perf``).

The schedule is torch's (``torch.profiler.schedule``, the same in ``torch_npu.profiler``):
``skip_first`` steps are not looked at, then each of ``repeat`` cycles waits ``wait`` steps,
warms up for ``warmup`` (profiling on, events dropped) and records ``active``. A step is one
optimizer step; a script that never steps an optimizer is profiled by time windows of
``window_seconds`` instead. The defaults keep the profile inside the overhead budget (<= 5% of
the run's time, as ModelArts' own lightweight profiling promises): three recorded steps after
two left alone (the first step compiles, allocates and fills caches; the second is the first
one like the rest) and one of warm-up, once. A stage may change it (``stages.<stage>.perf``).
"""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from majob.spec.fields import SpecModel


class Perf(SpecModel):
    """What ``--perf`` records: a profiler schedule over optimizer steps, and its detail."""

    skip_first: int = Field(
        2, ge=0, le=100_000, description="Optimizer steps left alone before the schedule starts."
    )
    wait: int = Field(0, ge=0, le=100_000, description="Steps of each cycle not profiled.")
    warmup: int = Field(
        1, ge=0, le=100, description="Steps of each cycle profiled with their events dropped."
    )
    active: int = Field(3, ge=1, le=100, description="Steps of each cycle recorded.")
    repeat: int = Field(
        1, ge=1, le=20, description="Cycles (wait, warmup, active); each writes its own profile."
    )
    level: Literal["level0", "level1", "level2"] = Field(
        "level0",
        description="NPU detail: torch_npu _ExperimentalConfig profiler_level Level0/1/2 "
        "(majob/perf/profiler.py LEVELS); on CPU/GPU torch.profiler records operators at every "
        "level.",
    )
    stacks: bool = Field(False, description="Python call stacks of each operator (with_stack).")
    memory: bool = Field(False, description="Tensor memory allocations (profile_memory).")
    shapes: bool = Field(False, description="Operator input shapes (record_shapes).")
    window_seconds: float = Field(
        10.0,
        gt=0,
        le=3600,
        description="A script that steps no optimizer: each this many seconds counts as a step.",
    )
    step_line_seconds: float = Field(
        30.0,
        ge=0,
        le=86_400,
        description="Every this many seconds of training, each process logs its recent step time "
        "(`[majob] step time: 35.2 ms (median of steps 81-120, rank 0)`), every run, profiled or "
        "not; 0: never.",
    )

    @property
    def last_step(self) -> int:
        """The last optimizer step (from 0) the schedule records."""
        cycle = self.wait + self.warmup + self.active
        return self.skip_first + cycle * self.repeat - 1

    def profiled_steps(self) -> list[int]:
        """Every optimizer step (from 0) whose events are recorded."""
        cycle = self.wait + self.warmup + self.active
        return [
            self.skip_first + k * cycle + self.wait + self.warmup + i
            for k in range(self.repeat)
            for i in range(self.active)
        ]

"""The node's step recorder (``bootstrap.py`` keeps one per process) and its step-time line.

Standard library only, and no import of ``majob``: the file goes to the node beside
``bootstrap.py`` (loaded by path, as ``profiler.py`` is; ``majob/perf/staging.py`` stages it for
a cloud job). Each optimizer step's start, end and gc time go to ``majob_steps_<R>.jsonl``, one
JSON line each, flushed as it goes. Every ``step_line_seconds`` of training (``perf:``; 0:
never) the process also says its recent step time on stderr, as one line of its log::

    [majob] step time: 35.2 ms (median of steps 81-120, rank 0)

the median of the steps that ended since its last line (step 0, which holds the start-up, and
profiled steps, slowed by the profiler, are left out, as ``majob/perf/steps.py`` leaves them
out). The line's format and the regex majob reads it back with (``parse_step_line``: the live
line of a followed job, ``majob/pipeline/metrics.py``) are both here, so they cannot drift.
"""

from __future__ import annotations

import gc
import json
import os
import re
import statistics
import sys
import time
from typing import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any


class StepLine(NamedTuple):
    """What one step-time line says."""

    ms: float
    first: int
    last: int
    rank: int


DEFAULT_LINE_SECONDS = 30.0
MARKER = "[majob] step time: "  # a line without it is none of these (checked before the regex)
LINE = MARKER + "{ms} ms (median of steps {first}-{last}, rank {rank})"
STEP_LINE = re.compile(
    r"\[majob\] step time: (?P<ms>\d+(?:\.\d+)?(?:e[-+]?\d+)?) ms "
    r"\(median of steps (?P<first>\d+)-(?P<last>\d+), rank (?P<rank>\d+)\)"
)


def ms_text(ms: float) -> str:
    """``35.2``, ``0.412``, ``1234``: three significant digits under 100 ms, whole ones above."""
    return f"{ms:.0f}" if ms >= 100 else f"{ms:.3g}"


def step_line(ms: float, first: int, last: int, rank: int) -> str:
    """``[majob] step time: 35.2 ms (median of steps 81-120, rank 0)``."""
    return LINE.format(ms=ms_text(ms), first=first, last=last, rank=rank)


def parse_step_line(text: str) -> StepLine | None:
    """The step time a log line says (anywhere in it: a ``[worker-i]`` prefix is fine)."""
    found = STEP_LINE.search(text) if MARKER in text else None
    if found is None:
        return None
    ms = float(found["ms"])
    return StepLine(ms, int(found["first"]), int(found["last"]), int(found["rank"]))


class Steps:
    """Each step's start, end and gc time, one JSON line each, flushed as it goes; and, every
    ``line_seconds`` (0: never), the median of the recent steps as one line to ``say``."""

    def __init__(
        self, line_seconds: float = DEFAULT_LINE_SECONDS, say: Callable[[str], Any] | None = None
    ) -> None:
        self.index = 0
        self.start_ns: int | None = None
        self.gc_ns = 0
        self._gc_started = 0
        self.out: Any = None
        self.line_ns = int(line_seconds * 1e9)
        self._say = say
        self._said_ns: int | None = None  # when the last line was said (or training began)
        self._recent: list[int] = []  # the durations (ns) of the steps since then
        self._first = 0  # the first of them
        gc.callbacks.append(self._gc)

    def _gc(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._gc_started = time.perf_counter_ns()
        elif self._gc_started:
            self.gc_ns += time.perf_counter_ns() - self._gc_started
            self._gc_started = 0

    def begin(self) -> None:
        if self.start_ns is None:
            self.start_ns = time.perf_counter_ns()
            self.gc_ns = 0

    def end(self, path: str, profiled: bool, rank: int = 0) -> None:
        now = time.perf_counter_ns()
        start = self.start_ns if self.start_ns is not None else now
        if self.out is None:
            os.makedirs(os.path.dirname(path), exist_ok=True)
            self.out = open(path, "a", encoding="utf-8")  # noqa: SIM115 (kept open, flushed)
        record = {"step": self.index, "start_ns": start, "end_ns": now, "gc_ns": self.gc_ns}
        self.out.write(json.dumps({**record, "profiled": profiled}) + "\n")
        self.out.flush()
        self._timed(self.index, now - start, profiled, now, rank)
        self.index += 1
        self.start_ns, self.gc_ns = now, 0

    def _timed(self, index: int, took_ns: int, profiled: bool, now: int, rank: int) -> None:
        """Step ``index`` took ``took_ns``: kept for the next line, said once it is time."""
        if self.line_ns <= 0:
            return
        if self._said_ns is None:
            self._said_ns = now  # training's clock starts at the end of step 0
        if index == 0 or profiled:
            return
        if not self._recent:
            self._first = index
        self._recent.append(took_ns)
        if now - self._said_ns < self.line_ns:
            return
        text = step_line(statistics.median(self._recent) / 1e6, self._first, index, rank)
        (self._say or _stderr)(text + "\n")
        self._said_ns, self._recent = now, []


def _stderr(text: str) -> None:
    sys.stderr.write(text)
    sys.stderr.flush()

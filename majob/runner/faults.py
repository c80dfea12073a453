"""A node that dies mid-run, on purpose: the fault a resume rehearsal injects into a local run.

``--fail-at 30s`` kills after 30 seconds of the run; ``--fail-at step:40`` once worker-0 has
logged the 40th point of the spec's progress metric (``step``, ``epoch`` or ``iter`` when the
spec's ``metrics:`` defines one, else its first metric); ``--fail-at loss:40`` counts the points
of the metric named. The kill is a SIGKILL to the node's whole process group, as a node lost to
a hardware fault gives no warning; ``node`` None kills every node (a job-level failure).
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from majob.runner.nodes import TASK_NAME, Node
from majob.spec.durations import parse_duration

# Metric names that count the run's progress: their values say where a restarted run began.
PROGRESS_NAMES = ("step", "epoch", "iter", "iteration", "global_step")
FAIL_AT_FORMS = "write a duration (30s, 2m) or METRIC:N (step:40, loss:12)"


@dataclass(frozen=True)
class FailAt:
    """When to kill: after ``seconds``, or once ``metric`` has ``points`` points on worker-0.
    ``node``: the node to kill (None: every node)."""

    seconds: int | None = None
    metric: str | None = None
    points: int = 0
    node: int | None = None

    def describe(self) -> str:
        who = "every node" if self.node is None else f"{TASK_NAME}-{self.node}"
        if self.seconds is not None:
            return f"{who} killed {self.seconds}s into the run"
        return f"{who} killed at point {self.points} of {self.metric}"


def progress_metric(metrics: Mapping[str, str]) -> str | None:
    """The metric that counts progress: one named like a step counter, else the first one."""
    for name in metrics:
        if name.lower() in PROGRESS_NAMES:
            return name
    return next(iter(metrics), None)


def parse_fail_at(text: str, metrics: Mapping[str, str], node: int | None = None) -> FailAt:
    """``30s`` / ``step:40`` / ``loss:12`` as a ``FailAt``; a ``ValueError`` saying the forms
    (and the spec's metrics) otherwise. ``step`` names the progress metric unless the spec
    defines a metric of that name."""
    name, sep, count = text.strip().partition(":")
    if not sep:
        try:
            return FailAt(seconds=parse_duration(text), node=node)
        except ValueError:
            raise ValueError(f"{text!r}: {FAIL_AT_FORMS}") from None
    if not count.isdigit() or int(count) < 1:
        raise ValueError(f"{text!r}: N must be a whole number from 1 ({FAIL_AT_FORMS})")
    metric = name if name in metrics else (progress_metric(metrics) if name == "step" else None)
    if metric is None:
        defined = ", ".join(metrics) or "none: add a `metrics:` block to the spec"
        raise ValueError(f"{text!r}: the spec has no metric {name!r} (its metrics: {defined})")
    return FailAt(metric=metric, points=int(count), node=node)


@dataclass
class FaultInjector:
    """Watches a run (its lines, its clock) and kills the node(s) when ``plan`` says.

    ``feed`` gets each ``[worker-i] line`` the run prints; ``tick`` runs between two looks of
    the wait loop. ``fired_after``: seconds into the run when the kill was sent (None: not
    yet)."""

    plan: FailAt
    metrics: Mapping[str, str]
    started: float = field(default_factory=time.monotonic)
    fired_after: float | None = None
    _seen: int = 0
    _pattern: re.Pattern[str] | None = None

    def __post_init__(self) -> None:
        if self.plan.metric is not None:
            self._pattern = re.compile(self.metrics[self.plan.metric])

    def feed(self, line: str) -> None:
        chief = f"[{TASK_NAME}-0] "
        if self._pattern is None or not line.startswith(chief):
            return
        found = self._pattern.search(line[len(chief) :])
        if found is not None:
            self._seen += 1

    def due(self) -> bool:
        if self.fired_after is not None:
            return False
        if self.plan.seconds is not None:
            return time.monotonic() - self.started >= self.plan.seconds
        return self._seen >= self.plan.points

    def tick(self, nodes: Sequence[Node]) -> None:
        if not self.due():
            return
        self.fired_after = time.monotonic() - self.started
        for node in nodes:
            if self.plan.node is None or node.command.index == self.plan.node:
                node.signal_group(signal.SIGKILL)

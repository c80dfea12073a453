"""The live status line of a followed cloud job: its phase, how long it has been in it, and the
last value of each metric the spec's ``metrics:`` reads from its log.

``majob submit --wait`` and ``majob pipeline`` show it under the job's log lines. The line is
recomputed each time it is drawn (a terminal redraws it several times a second), not only when
a poll answers: between two polls a running job's duration goes on growing, so the line says
what is true now. Polls set its ground truth (``seen``): the service's own duration, or, while
the service still says 0 (it may lag the phase), the time since majob saw the phase begin.
The step time is the last one the job's first node said in its log (the node bootstrap's
``[majob] step time: ...`` line, read by the same ``MetricReader``).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from majob.perf.steplog import ms_text
from majob.pipeline.metrics import MetricReader, step_time, summary
from majob.text import clock

if TYPE_CHECKING:
    from majob.service.base import Job

#: Phases before the job runs: the line counts how long it has waited.
WAITING = frozenset({"Creating", "Pending"})


class LiveLine:
    """One followed job's status line; ``metrics`` is the reader its log lines feed."""

    def __init__(
        self,
        job: Job,
        metrics: MetricReader | None = None,
        *,
        now: Callable[[], float] = time.monotonic,
    ) -> None:
        self.metrics = metrics
        self._now = now
        self.job = job
        self._seen_at = now()  # when the last poll answered
        self._phase_since = self._seen_at  # when majob first saw the current phase
        self._shown_ms = 0.0  # never shown going backwards

    def seen(self, job: Job) -> None:
        """A poll read ``job``."""
        at = self._now()
        if job.phase != self.job.phase:
            self._phase_since = at
        self.job, self._seen_at = job, at

    def text(self) -> str:
        """``mnist-debug (3f2a9c1e): Running, 1m05s · step 35.2 ms · loss 0.31 · accuracy 91.2``."""
        job = self.job
        head = f"{job.name} ({job.id[:8]}): {job.phase_label}"
        now = self._now()
        if job.phase in WAITING:
            head += f", waiting {clock((now - self._phase_since) * 1000)}"
        elif job.finished:
            head += f" in {clock(job.duration_ms)}"
        else:
            service = job.duration_ms + (now - self._seen_at) * 1000
            ours = (now - self._phase_since) * 1000 if job.phase == "Running" else 0
            self._shown_ms = max(self._shown_ms, service, ours)
            head += f", {clock(self._shown_ms)}"
        parts = [head]
        if self.metrics is not None:
            step_ms = step_time(self.metrics)
            if step_ms is not None:
                parts.append(f"step {ms_text(step_ms)} ms")
            parts += [f"{name} {value:g}" for name, value in summary(self.metrics.series).items()]
        return " · ".join(parts)

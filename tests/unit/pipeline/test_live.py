"""The live status line of a followed job: a clock that ticks between polls, the waiting time
of a queued job, the last metric values. The clock is the test's, so nothing here is timed."""

from __future__ import annotations

from dataclasses import replace

from majob.pipeline.live import LiveLine
from majob.pipeline.metrics import MetricReader
from majob.service.base import Job


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


JOB = Job(id="3f2a9c1e-0000-4000-8000-000000000001", name="mnist-debug", phase="Creating")


def test_a_queued_job_counts_its_wait_and_a_running_one_ticks_between_polls() -> None:
    clock = Clock()
    line = LiveLine(JOB, now=clock)
    assert line.text() == "mnist-debug (3f2a9c1e): Creating, waiting 0m00s"
    clock.now += 1
    line.seen(replace(JOB, phase="Pending", secondary_phase="Queuing"))
    clock.now += 7.5  # no poll answers meanwhile: the line still counts
    assert line.text() == "mnist-debug (3f2a9c1e): Pending (Queuing), waiting 0m07s"

    line.seen(replace(JOB, phase="Running", duration_ms=0))
    clock.now += 65.2
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 1m05s"
    line.seen(replace(JOB, phase="Running", duration_ms=66_000))  # the service's own duration
    clock.now += 2
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 1m08s"
    line.seen(replace(JOB, phase="Running", duration_ms=60_000))  # a lagging answer
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 1m08s"  # never shown going back

    line.seen(replace(JOB, phase="Completed", duration_ms=70_000))
    clock.now += 30
    assert line.text() == "mnist-debug (3f2a9c1e): Completed in 1m10s"


def test_the_last_value_of_each_metric_is_on_the_line() -> None:
    reader = MetricReader({"loss": r"loss=([0-9.]+)", "accuracy": r"acc=([0-9.]+)"})
    line = LiveLine(replace(JOB, phase="Running", duration_ms=5_000), reader, now=Clock())
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 0m05s"
    for text in ("[worker-0] loss=2.3", "[worker-1] loss=9", "[worker-0] loss=0.31 acc=91.2"):
        reader.feed(text)
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 0m05s · loss 0.31 · accuracy 91.2"


def test_the_first_node_s_last_step_time_is_on_the_line_and_is_no_metric() -> None:
    reader = MetricReader({"loss": r"loss=([0-9.]+)", "ms": r"([0-9.]+) ms"})
    line = LiveLine(replace(JOB, phase="Running", duration_ms=5_000), reader, now=Clock())
    for text in (
        "[worker-1] [majob] step time: 90.5 ms (median of steps 1-40, rank 1)",
        "[worker-0] [majob] step time: 35.2 ms (median of steps 1-40, rank 0)",
        "[worker-0] loss=0.31",
        "[worker-0] [majob] step time: 36.75 ms (median of steps 41-80, rank 0)",
    ):
        reader.feed(text)
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 0m05s · step 36.8 ms · loss 0.31"
    assert reader.series == {"worker-0": {"loss": [0.31]}}  # the step line feeds no metric
    assert reader.step_ms == {"worker-0": 36.75, "worker-1": 90.5}


def test_a_spec_without_metrics_still_shows_the_step_time() -> None:
    reader = MetricReader({})
    line = LiveLine(replace(JOB, phase="Running", duration_ms=5_000), reader, now=Clock())
    reader.feed("[majob] step time: 412 ms (median of steps 3-9, rank 0)")  # no node prefix
    assert line.text() == "mnist-debug (3f2a9c1e): Running, 0m05s · step 412 ms"
    assert reader.series == {}

"""The node's step-time line: its format, its parser (one regex, in ``perf/steplog.py``), and
when the recorder says it. Nothing here is timed: a line is said at every step after step 0
when ``line_seconds`` is a nanosecond, never when it is 0."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.perf.steplog import StepLine, Steps, parse_step_line, step_line


@pytest.mark.parametrize(
    ("ms", "shown"),
    [(35.24, "35.2"), (0.41234, "0.412"), (352.4, "352"), (1234.5, "1234"), (3e-5, "3e-05")],
)
def test_the_line_reads_back_as_it_was_said(ms: float, shown: str) -> None:
    text = step_line(ms, 81, 120, 3)
    assert text == f"[majob] step time: {shown} ms (median of steps 81-120, rank 3)"
    assert parse_step_line(text) == StepLine(float(shown), 81, 120, 3)


def test_the_line_is_found_behind_a_node_prefix_and_nothing_else_is_a_step_line() -> None:
    said = parse_step_line("[worker-1] [majob] step time: 7.5 ms (median of steps 1-9, rank 1)")
    assert said == StepLine(7.5, 1, 9, 1)
    for other in (
        "step time: 7.5 ms",
        "[majob] step time p50 7.5 ms, p95 9.1 ms (8 steps)",  # the end-of-run summary
        "[majob] step time: nan ms (median of steps 1-9, rank 1)",
        "loss=0.3 time: 7.5 ms",
    ):
        assert parse_step_line(other) is None, other


def _steps(tmp_path: Path, line_seconds: float, count: int) -> list[str]:
    said: list[str] = []
    steps = Steps(line_seconds, said.append)
    steps.begin()
    for index in range(count):
        steps.end(str(tmp_path / "majob_steps_2.jsonl"), profiled=index == 4, rank=2)
    steps.out.close()
    assert len((tmp_path / "majob_steps_2.jsonl").read_text().splitlines()) == count
    return said


def test_each_line_is_the_median_of_the_steps_since_the_last_one(tmp_path: Path) -> None:
    said = _steps(tmp_path, 1e-9, 6)
    # step 0 (start-up) and step 4 (profiled) are in the step file, never in a line
    lines = [parse_step_line(text) for text in said]
    assert [(s.first, s.last, s.rank) for s in lines if s] == [
        (1, 1, 2),
        (2, 2, 2),
        (3, 3, 2),
        (5, 5, 2),
    ]
    assert all(text.endswith("\n") for text in said)
    assert all(s is not None and s.ms > 0 for s in lines)


def test_zero_seconds_says_nothing(tmp_path: Path) -> None:
    assert _steps(tmp_path, 0, 6) == []

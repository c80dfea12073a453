"""Step times read back from the nodes' step files, and what ``majob run`` says of them."""

from __future__ import annotations

import json
import math
from pathlib import Path

from majob.perf.step_records import percentile
from majob.perf.steps import step_time_lines, step_times


def _write(
    folder: Path, rank: int, durations_ms: list[float], profiled: set[int] = frozenset()
) -> None:
    folder.mkdir(parents=True)
    start, lines = 0, []
    for step, ms in enumerate(durations_ms):
        end = start + int(ms * 1e6)
        record = {
            "step": step,
            "start_ns": start,
            "end_ns": end,
            "gc_ns": 0,
            "profiled": step in profiled,
        }
        lines.append(json.dumps(record))
        start = end
    (folder / f"majob_steps_{rank}.jsonl").write_text("\n".join(lines) + "\n")


def test_percentile_is_a_step_that_happened() -> None:
    values = [float(v) for v in range(1, 21)]
    assert percentile(values, 0.5) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile([7.0], 0.95) == 7.0
    assert math.isnan(percentile([], 0.5))


def test_step_zero_profiled_steps_and_a_killed_node_s_last_line_are_left_out(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "profiling" / "worker-0-rank0_20260101000000000_ascend_pt"
    _write(folder, 0, [500.0, 10.0, 10.0, 40.0, 12.0], profiled={3})
    with (folder / "majob_steps_0.jsonl").open("a") as out:
        out.write('{"step": 5, "start_ns": 1')  # killed mid-write
    times = step_times([tmp_path / "profiling", tmp_path / "absent"])
    assert times is not None
    assert times.durations_ms == [10.0, 10.0, 12.0]
    assert (times.count, times.p50, times.p95) == (3, 10.0, 12.0)
    (line,) = step_time_lines(times)
    assert (
        line == "step time p50 10.0 ms, p95 12.0 ms (3 steps, step 0 and profiled steps left out)"
    )


def test_several_nodes_name_the_slowest_against_the_median(tmp_path: Path) -> None:
    for node, ms in ((0, 10.0), (1, 10.0), (2, 15.0)):
        _write(tmp_path / "steps" / f"worker-{node}-rank{node}", node, [100.0] + [ms] * 4)
    lines = step_time_lines(step_times([tmp_path / "steps"]))
    assert lines == [
        "step time p50 10.0 ms, p95 15.0 ms (12 steps, step 0 and profiled steps left out); "
        "per node p50: worker-0-rank0 10.0, worker-1-rank1 10.0, worker-2-rank2 15.0 ms",
        "  slowest node: worker-2-rank2, p50 1.50x the median node's",
    ]


def test_no_step_file_or_only_step_zero_says_nothing(tmp_path: Path) -> None:
    assert step_times([tmp_path]) is None
    _write(tmp_path / "steps" / "worker-0-rank0", 0, [100.0])
    assert step_times([tmp_path / "steps"]) is None
    assert step_time_lines(None) == []

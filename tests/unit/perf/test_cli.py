"""``majob perf`` on profiles built by hand: the table, JSON, HTML, exit codes, and each bad
input with one clear message and exit 2."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

from .conftest import StepPlan, step_events, write_rank

runner = CliRunner()


def _perf(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["perf", *args, "--no-msprof"])
    return result.exit_code, result.output


def test_a_data_bound_profile_names_the_loader_first(plain_profile: Callable[..., Path]) -> None:
    root = plain_profile(data=5000.0)
    code, output = _perf(str(root))
    assert code == 1, output
    assert "1. saves" in output and "the step waits for data" in output
    assert "num_workers" in output


def test_json_has_the_breakdown_and_the_ranked_findings(plain_profile: Callable[..., Path]) -> None:
    root = plain_profile(data=5000.0)
    code, output = _perf(str(root), "--format", "json")
    data = json.loads(output)
    assert code == 1
    [rank] = data["ranks"]
    assert rank["label"] == "worker-0-rank0"
    assert rank["breakdown_share"]["data"] > 0.5
    assert sum(rank["breakdown_share"].values()) == pytest.approx(1.0)
    savings = [f["saving_ms_per_step"] for f in data["findings"]]
    assert savings == sorted(savings, reverse=True)
    assert data["findings"][0]["key"] == "data_wait"
    assert data["partial"] == []


def test_a_profile_with_nothing_to_fix_exits_0(plain_profile: Callable[..., Path]) -> None:
    code, output = _perf(str(plain_profile(data=1.0)))
    assert code == 0, output
    assert "findings: none" in output


def test_threshold_decides_the_exit_code(plain_profile: Callable[..., Path]) -> None:
    root = plain_profile(data=100.0)  # about 10% of a step
    assert _perf(str(root))[0] == 1
    assert _perf(str(root), "--threshold", "0.5")[0] == 0


def test_html_has_the_three_plots(plain_profile: Callable[..., Path], tmp_path: Path) -> None:
    page = tmp_path / "report.html"
    _perf(str(plain_profile(data=5000.0)), "--html", str(page))
    text = page.read_text()
    for svg in ("step-times", "step-breakdown", "rank-breakdown"):
        assert f'id="{svg}"' in text
    assert "the step waits for data" in text


def test_a_rank_folder_or_a_run_dir_above_profiling_are_read_too(
    plain_profile: Callable[..., Path],
) -> None:
    root = plain_profile(data=5000.0)
    [folder] = (root / "profiling").iterdir()
    assert _perf(str(folder))[0] == 1
    assert _perf(str(root))[0] == 1


def test_the_slowest_rank_is_named(tmp_path: Path) -> None:
    fast = StepPlan([("aten::linear", 1000.0), ("Optimizer.step#SGD.step", 100.0)])
    slow = StepPlan([("aten::linear", 2000.0), ("Optimizer.step#SGD.step", 100.0)])
    for rank, plan in enumerate((fast, fast, slow)):
        write_rank(tmp_path, step_events([plan] * 4), rank=rank, node=rank)
    _, output = _perf(str(tmp_path), "--format", "json")
    data = json.loads(output)
    assert [r["label"] for r in data["ranks"]] == [f"worker-{i}-rank{i}" for i in range(3)]
    slow_rank = next(f for f in data["findings"] if f["key"] == "slow_rank")
    assert slow_rank["where"] == "worker-2-rank2"


def test_a_collection_in_the_same_gap_every_step_is_gc_not_also_a_host_gap(
    tmp_path: Path,
) -> None:
    # two 2 ms gaps per step, the collector ran 3 ms of them (majob's step records): before,
    # the gaps were counted whole as host time as well, and host_gaps (4 ms) came first
    plan = StepPlan([("aten::linear", 500.0), ("Optimizer.step#SGD.step", 100.0)], gap=2000.0)
    step_ns = 4_600_000
    records = [(i * step_ns, (i + 1) * step_ns, 3_000_000) for i in range(6)]
    write_rank(tmp_path, step_events([plan] * 6), steps=records)
    _, output = _perf(str(tmp_path), "--format", "json")
    shares = {f["key"]: f["share_of_step"] for f in json.loads(output)["findings"]}
    assert max(shares, key=shares.__getitem__) == "gc"
    assert shares.get("host_gaps", 0.0) < shares["gc"]
    assert sum(shares.values()) <= 1.0 + 1e-9


def test_a_killed_profile_is_analysed_and_said_partial(tmp_path: Path) -> None:
    plan = StepPlan([("aten::linear", 1000.0), ("Optimizer.step#SGD.step", 100.0)])
    folder = write_rank(tmp_path, step_events([plan] * 6), info=False)  # type: ignore[arg-type]
    trace = folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"
    text = trace.read_text()
    trace.write_text(text[: int(len(text) * 0.7)])  # killed -9 while writing
    code, output = _perf(str(tmp_path), "--format", "json")
    data = json.loads(output)
    assert code == 0
    assert 0 < len(data["ranks"][0]["steps_profiled"]) < 6
    partial = " ".join(data["partial"])
    assert "no profiler_info" in partial and "cut short" in partial
    code, output = _perf(str(tmp_path))
    assert "partial profile:" in output


def test_a_collection_that_stopped_early_is_partial(tmp_path: Path) -> None:
    plan = StepPlan([("aten::linear", 1000.0), ("Optimizer.step#SGD.step", 100.0)])
    write_rank(tmp_path, step_events([plan] * 3), info={"complete": False, "reason": "signal"})
    _, output = _perf(str(tmp_path), "--format", "json")
    assert json.loads(output)["partial"] == [
        "worker-0-rank0: collection stopped early (reason: signal)"
    ]


def _bad(args: list[str], *expected: str) -> None:
    code, output = _perf(*args)
    assert code == 2, output
    lines = [line for line in output.splitlines() if line.strip()]
    assert len(lines) <= 2, output  # the message and its hint
    for text in expected:
        assert text in output
    assert "Traceback" not in output


def test_not_a_profile_directory(tmp_path: Path) -> None:
    (tmp_path / "model.pth").write_text("x")
    _bad([str(tmp_path)], "not a profile directory")


def test_no_such_target(tmp_path: Path) -> None:
    _bad([str(tmp_path / "missing")], "no such directory, run id or OBS path")


def test_a_malformed_trace(tmp_path: Path) -> None:
    folder = write_rank(tmp_path, [])
    (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text('{"traceEvents": [}}')
    _bad([str(tmp_path)], "not a usable trace", "malformed JSON")


def test_a_trace_that_is_not_json(tmp_path: Path) -> None:
    folder = write_rank(tmp_path, [])
    (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_bytes(b"\x00\x01PK")
    _bad([str(tmp_path)], "not a Chrome trace")


def test_a_rank_folder_without_a_trace(tmp_path: Path) -> None:
    folder = write_rank(tmp_path, [])
    (folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").unlink()
    _bad([str(tmp_path)], "no trace")


def test_a_script_that_never_steps_an_optimizer(tmp_path: Path) -> None:
    # a time-window profile: operators, but no ProfilerStep#N
    events = step_events([StepPlan([("aten::linear", 100.0)])] * 3)
    events = [e for e in events if not e["name"].startswith("ProfilerStep")]
    write_rank(tmp_path, events)
    _bad([str(tmp_path)], "no optimizer step", "optimizer.step()")


def test_one_unusable_rank_of_several_is_skipped_and_said(tmp_path: Path) -> None:
    plan = StepPlan([("aten::linear", 1000.0), ("Optimizer.step#SGD.step", 100.0)])
    write_rank(tmp_path, step_events([plan] * 3), rank=0)
    broken = write_rank(tmp_path, [], rank=1, node=1)
    (broken / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").write_text("[")
    _, output = _perf(str(tmp_path), "--format", "json")
    data = json.loads(output)
    assert [r["label"] for r in data["ranks"]] == ["worker-0-rank0"]
    assert any("worker-1-rank1: not analysed" in line for line in data["partial"])


def test_two_profiles_side_by_side(plain_profile: Callable[..., Path], tmp_path: Path) -> None:
    slow = plain_profile(data=5000.0)
    fast = tmp_path / "after"
    plan = StepPlan([("aten::linear", 400.0), ("Optimizer.step#SGD.step", 100.0)])
    write_rank(fast, step_events([plan] * 6))
    code, output = _perf(str(slow), str(fast), "--format", "json")
    data = json.loads(output)
    assert code == 0
    data_row = next(r for r in data["breakdown_ms"] if r["name"] == "data")
    assert data_row["a"] > data_row["b"] == 0.0
    assert "the step waits for data" in data["findings_gone"]
    code, output = _perf(str(slow), str(fast))
    assert "gone in B: the step waits for data" in output


def test_three_targets_are_refused(plain_profile: Callable[..., Path]) -> None:
    root = str(plain_profile())
    _bad([root, root, root], "one profile, or two")


def test_the_summary_a_profiled_run_ends_with(
    plain_profile: Callable[..., Path], tmp_path: Path
) -> None:
    from majob.perf.report import diagnose, summary_lines

    diagnosis = diagnose("run", plain_profile(data=5000.0), tmp_path / "s", run_advisor=False)
    lines = summary_lines(diagnosis)
    assert lines[0].startswith("step time p50 ") and "data " in lines[0]
    assert lines[1].startswith("1. saves ") and "the step waits for data: DataLoader(" in lines[1]

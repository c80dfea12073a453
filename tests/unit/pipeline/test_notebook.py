"""The notebook side: short reprs, HTML displays, metric frames and plots."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.notebook import series_frame, sparkline
from majob.pipeline.ledger import Ledger
from majob.pipeline.results import PipelineResult, StageResult
from majob.runner.result import NodeResult, OutputFile, RunResult
from majob.service.base import Job

SERIES = {"worker-0": {"loss": [2.0, 1.0, 0.5]}, "worker-1": {"loss": [2.1, 0.9]}}


def run_result(tmp_path: Path) -> RunResult:
    return RunResult(
        run_id="20261202T120000Z-tiny-abc123",
        run_dir=tmp_path / "runs" / "20261202T120000Z-tiny-abc123",
        stage="local",
        status="passed",
        effective_spec_digest="f" * 64,
        started_at="2026-12-02T12:00:00+00:00",
        duration=3.25,
        nodes=(NodeResult(0, 0, tmp_path / "worker-0.log"),),
        outputs=(OutputFile("train_url", "model.pth", 10),),
        findings=(),
    )


def test_run_result_repr_is_short_and_readable(tmp_path: Path) -> None:
    text = repr(run_result(tmp_path))
    assert text == (
        "<RunResult local passed in 3.2s, 1 node, 1 output file, run 20261202T120000Z-tiny-abc123>"
    )
    assert "f" * 64 not in text and str(tmp_path) not in text
    html = run_result(tmp_path)._repr_html_()
    assert "train_url/model.pth" in html and "<b>local run</b>" in html and ">passed</span>" in html


def test_job_repr_and_html(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    job = Job(
        id="1234-abcd", name="tiny-debug", phase="Completed", duration_ms=65_000, node_count=2
    )
    assert repr(job) == "<Job tiny-debug Completed 1m05s, 2 nodes, id 1234-abcd>"
    html = job._repr_html_()
    assert "<b>job tiny-debug</b>" in html and "<div>1234-abcd</div>" in html
    assert ">Completed</span>" in html and "in 1m05s" in html
    assert "<svg" not in html  # not in the ledger: no metrics
    assert not (tmp_path / ".majob").exists()  # showing a job creates no ledger


def test_job_metrics_come_from_the_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    with Ledger() as ledger:
        record_id = ledger.start(spec_name="tiny", stage="debug", spec_digest="s", code_digest="c")
        ledger.finish(record_id, result="passed", metrics=SERIES, job_id="1234-abcd")
    job = Job(id="1234-abcd", name="tiny-debug", phase="Completed")
    frame = job.metrics()
    assert list(frame.columns) == ["node", "metric", "step", "value"]
    assert frame[frame.node == "worker-0"].value.tolist() == [2.0, 1.0, 0.5]
    assert "<svg" in job._repr_html_()
    with pytest.raises(UserInputError, match="job other is not in the ledger"):
        Job(id="other", name="x", phase="Completed").metrics()


def test_metrics_are_a_plain_mapping_without_pandas(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "pandas", None)  # import pandas now fails
    assert series_frame(SERIES) == {
        "worker-0": {"loss": [2.0, 1.0, 0.5]},
        "worker-1": {"loss": [2.1, 0.9]},
    }


def test_plot_draws_one_line_per_node_and_metric() -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    result = StageResult("debug", "passed", duration=1.0, series=SERIES)
    axes = result.plot()
    assert [line.get_label() for line in axes.get_lines()] == ["loss (worker-0)", "loss (worker-1)"]
    assert list(axes.get_lines()[0].get_ydata()) == [2.0, 1.0, 0.5]
    with pytest.raises(UserInputError, match="no metric 'acc' was recorded \\(recorded: loss\\)"):
        result.plot("acc")
    plt.close("all")


def test_plot_without_matplotlib_says_how_to_get_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib.pyplot", None)
    with pytest.raises(UserInputError, match="plot\\(\\) needs matplotlib") as raised:
        StageResult("debug", "passed", series=SERIES).plot()
    assert "majob[plot]" in (raised.value.hint or "")


def test_stage_and_pipeline_results_show_themselves() -> None:
    passed = StageResult(
        "local",
        "passed",
        why="has not passed yet",
        duration=2.0,
        outputs=("train_url/model.pth",),
        series=SERIES,
    )
    failed = StageResult(
        "debug", "failed", reason="expect.metrics.loss: loss < 1 failed", duration=70.0
    )
    assert (
        repr(failed) == "<StageResult debug failed in 1m10s: expect.metrics.loss: loss < 1 failed>"
    )
    html = passed._repr_html_()
    assert "train_url/model.pth" in html and "loss (worker-0)" in html and "<svg" in html
    result = PipelineResult("tiny", [passed, failed], "pipeline stopped")
    assert repr(result) == "<PipelineResult tiny: local passed, debug failed>"
    assert not result.ok and result.failed is failed and result["local"] is passed
    assert "pipeline stopped" in result._repr_html_()


def test_sparkline_needs_two_points() -> None:
    assert sparkline([1.0]) == ""
    assert sparkline([1.0, 1.0]).startswith("<svg")


def test_history_and_job_lists_read_as_short_tables() -> None:
    from majob.pipeline.ledger_schema import StageRecord, StageRecords
    from majob.service.base import JobList

    records = StageRecords(
        [
            StageRecord(
                2, "tiny", "debug", "s", "c", "failed", reason="expect.outputs: no model.pth",
                job_id="3f2a9c1e-0000", duration=45.0, started_at="2026-12-03T10:00:00+00:00",
            ),
            StageRecord(1, "tiny", "local", "s", "c", "passed", duration=2.0, started_at="t1"),
        ]
    )  # fmt: skip
    assert repr(records) == (
        "<2 ledger records, newest first>\n"
        "  <StageRecord #2 tiny debug failed in 45.0s, job 3f2a9c1e (2026-12-03T10:00:00+00:00): "
        "expect.outputs: no model.pth>\n"
        "  <StageRecord #1 tiny local passed in 2.0s (t1)>"
    )
    html = records._repr_html_() or ""
    assert "ledger: 2 records, newest first" in html and ">failed</span>" in html
    jobs = JobList([Job(id="3f2a9c1e-0000", name="tiny-debug", phase="Failed", duration_ms=5000)])
    assert repr(jobs) == "<1 job, newest first>\n  3f2a9c1e tiny-debug Failed 5.0s"
    assert ">Failed</span>" in (jobs._repr_html_() or "")
    assert jobs == [jobs[0]] and repr(JobList()) == "<0 jobs, newest first>"

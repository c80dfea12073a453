"""Metric definitions over the log, and the expect checks."""

from __future__ import annotations

from majob.pipeline.expect import check_expect
from majob.pipeline.metrics import MetricReader, read_metrics, summary
from majob.spec.expect import Expect

DEFS = {"loss": r"loss=([0-9.]+)", "acc": r"acc ([0-9.]+)"}


def test_each_node_keeps_its_own_series_in_log_order() -> None:
    lines = [
        "[worker-0] step 0 loss=2.5 acc 0.1",
        "[worker-1] step 0 loss=2.4",
        "[worker-0] step 1 loss=1.5",
        "[worker-1] something else",
        "[worker-0] loss=.",  # the group caught "." which is no number: skipped
    ]
    series = read_metrics(DEFS, lines)
    assert series == {
        "worker-0": {"loss": [2.5, 1.5], "acc": [0.1]},
        "worker-1": {"loss": [2.4]},
    }
    assert summary(series) == {"loss": 1.5, "acc": 0.1}


def test_lines_without_a_prefix_are_worker_0s() -> None:
    reader = MetricReader({"loss": r"loss=([0-9.]+)"})
    reader.feed("loss=3")
    reader.feed("loss=4", node="worker-2")
    assert reader.series == {"worker-0": {"loss": [3.0]}, "worker-2": {"loss": [4.0]}}


def test_no_definitions_read_nothing() -> None:
    assert read_metrics({}, ["loss=1"]) == {}


def expect(**fields: object) -> Expect:
    return Expect.model_validate(fields)


def test_all_checks_hold() -> None:
    failures = check_expect(
        expect(
            outputs=["model.pth", "train_url/sub/x.txt"],
            log_contains=["done"],
            log_excludes=["nan"],
            metrics={"loss": "< 2.0"},
        ),
        outputs=["train_url/model.pth", "train_url/sub/x.txt"],
        lines=["[worker-0] loss=1.0", "[worker-0] done"],
        metrics={"worker-0": {"loss": [3.0, 1.0]}},
    )
    assert failures == []


def test_each_failed_check_is_named_with_what_was_seen() -> None:
    failures = check_expect(
        expect(
            outputs=["model.pth"],
            log_contains=["finished"],
            log_excludes=["(?i)nan"],
            metrics={"loss": "< 2.0", "acc": ">= 0.9"},
        ),
        outputs=["train_url/metrics.json"],
        lines=["[worker-0] loss=NaN", "[worker-0] loss=2.31"],
        metrics={"worker-0": {"loss": [2.31]}, "worker-1": {"loss": [1.0]}},
    )
    assert failures == [
        "expect.outputs: model.pth is missing (output files: train_url/metrics.json)",
        "expect.log_contains: no log line matches 'finished'",
        "expect.log_excludes: '(?i)nan' matched the line '[worker-0] loss=NaN'",
        "expect.metrics.loss: loss < 2 failed: the last value on worker-0 is 2.31",
        "expect.metrics.acc: acc >= 0.9 cannot hold: no log line reported acc",
    ]

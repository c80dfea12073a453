"""``--fail-at``: its forms, the metric ``step`` names, and when the injector kills."""

from __future__ import annotations

import pytest

from majob.runner.faults import FailAt, FaultInjector, parse_fail_at, progress_metric

METRICS = {"loss": "loss ([0-9.]+)", "epoch": r"epoch (\d+)"}


def test_the_progress_metric_is_the_one_named_like_a_counter_else_the_first() -> None:
    assert progress_metric(METRICS) == "epoch"
    assert progress_metric({"loss": "l (.)", "acc": "a (.)"}) == "loss"
    assert progress_metric({}) is None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("30s", FailAt(seconds=30)),
        ("1m30s", FailAt(seconds=90)),
        ("step:40", FailAt(metric="epoch", points=40)),
        ("loss:3", FailAt(metric="loss", points=3)),
    ],
)
def test_forms(text: str, expected: FailAt) -> None:
    assert parse_fail_at(text, METRICS) == expected


def test_step_is_a_metric_of_that_name_when_the_spec_has_one() -> None:
    assert parse_fail_at("step:2", {"loss": "l (.)", "step": "s (.)"}).metric == "step"


@pytest.mark.parametrize("text", ["soon", "0s", "step:", "step:-1", "step:x", "acc:3"])
def test_bad_forms_say_the_good_ones(text: str) -> None:
    with pytest.raises(ValueError, match=r"METRIC:N|whole number|no metric 'acc'"):
        parse_fail_at(text, METRICS)


def test_step_without_metrics_says_to_add_them() -> None:
    with pytest.raises(ValueError, match="add a `metrics:` block"):
        parse_fail_at("step:3", {})


def test_points_are_counted_on_worker_0_only() -> None:
    injector = FaultInjector(FailAt(metric="epoch", points=2), METRICS)
    for line in ["[worker-1] epoch 0", "[worker-1] epoch 1", "[majob] epoch 9", "[worker-0] x"]:
        injector.feed(line)
    assert not injector.due()
    injector.feed("[worker-0] epoch 0")
    injector.feed("[worker-0] epoch 1")
    assert injector.due()


def test_the_kill_names_who_dies() -> None:
    assert FailAt(seconds=5).describe() == "every node killed 5s into the run"
    assert FailAt(metric="loss", points=3, node=1).describe() == (
        "worker-1 killed at point 3 of loss"
    )

"""Where a restarted run began, read from the metric series; the final metrics compared."""

from __future__ import annotations

from majob.pipeline.resumed import judge_resume

LOSS = [2.0, 1.0, 0.5, 0.25, 0.125, 0.0625]


def _series(**metrics: list[float]) -> dict[str, dict[str, list[float]]]:
    return {"worker-0": dict(metrics)}


def test_a_progress_metric_says_where_the_restart_began() -> None:
    metrics = {"loss": "l (.)", "epoch": "e (.)"}
    reference = _series(epoch=[0, 1, 2, 3, 4, 5], loss=LOSS)
    verdict = judge_resume(metrics, reference, _series(epoch=[3, 4, 5], loss=LOSS[3:]))
    assert verdict.resumed is True and verdict.began == "epoch 3"
    assert verdict.final_matches
    again = judge_resume(metrics, reference, _series(epoch=[0, 1, 2, 3, 4, 5], loss=LOSS))
    assert again.resumed is False and again.began == "epoch 0"


def test_without_one_the_point_count_says_it_and_the_value_is_checked() -> None:
    metrics = {"loss": "l (.)"}
    verdict = judge_resume(metrics, _series(loss=LOSS), _series(loss=LOSS[2:]))
    assert verdict.resumed is True and verdict.began == "point 2 of loss"
    assert "agrees with the uninterrupted run's there (0.5)" in verdict.how
    odd = judge_resume(metrics, _series(loss=LOSS), _series(loss=[9.0, *LOSS[3:]]))
    assert "differs from" in odd.how
    over = judge_resume(metrics, _series(loss=LOSS), _series(loss=LOSS))
    assert over.resumed is False and over.began == "point 0 of loss"


def test_final_metrics_within_the_tolerance() -> None:
    metrics = {"loss": "l (.)"}
    close = judge_resume(metrics, _series(loss=[1.0, 0.5]), _series(loss=[0.52]), 0.05)
    assert close.final_matches
    far = judge_resume(metrics, _series(loss=[1.0, 0.5]), _series(loss=[0.6]), 0.05)
    assert not far.final_matches
    assert far.resumed is True  # resumed, but ended elsewhere


def test_no_metrics_cannot_tell() -> None:
    verdict = judge_resume({}, {}, {})
    assert verdict.resumed is None and "no `metrics:`" in verdict.how
    assert not verdict.final_matches
    silent = judge_resume({"loss": "l (.)"}, _series(loss=LOSS), {})
    assert silent.resumed is None and "no metric was logged" in silent.how

"""The precision gate's curve comparison and its verdicts (``pipeline/likegate.py``)."""

from __future__ import annotations

import math
from pathlib import Path

from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord
from majob.pipeline.likegate import first_parting, judge_like, mean_curve, reference_run
from majob.pipeline.precision_gates import GateVerdict, last_gate_verdict, save_gate_verdict
from majob.spec.precision_gate import PrecisionGate, applies

GATE = PrecisionGate(like="local", loss_rtol=0.05)


def _record(id_: int, stage: str = "local", result: str = "passed", **kw: object) -> StageRecord:
    fields: dict[str, object] = {"spec_digest": "s", "code_digest": "c", **kw}
    return StageRecord(id_, "tiny", stage, result=result, **fields)  # type: ignore[arg-type]


def test_each_sides_curve_is_its_nodes_mean_where_all_reported() -> None:
    series = {"worker-0": {"loss": [1.0, 0.5, 0.25]}, "worker-1": {"loss": [3.0, 1.5]}}
    assert mean_curve(series, "loss") == [2.0, 1.0]
    assert mean_curve({"worker-0": {"acc": [1.0]}}, "loss") == []


def test_the_curves_part_at_the_first_point_past_the_tolerance() -> None:
    assert first_parting([1.0, 0.5, 0.25], [1.01, 0.52, 0.4], 0.05, None) == (3, 2)
    assert first_parting([1.0, 0.5], [1.0, 0.5, 9.0], 0.05, None) == (2, None)
    assert first_parting([1.0, 0.5, 0.25], [1.0, 0.5, 9.0], 0.05, 2) == (2, None)  # steps: 2
    assert first_parting([1.0, 0.5], [1.0, math.nan], 0.05, None) == (2, 1)
    assert first_parting([math.nan], [math.nan], 0.05, None) == (1, None)  # alike, if not well


def test_the_reference_is_the_newest_passed_run_of_the_same_spec_and_code() -> None:
    records = [
        _record(5, "debug"),
        _record(4, code_digest="other"),
        _record(3, result="failed"),
        _record(2),
        _record(1),
    ]
    found = reference_run(records, "local", "s", "c")
    assert found is not None and found.id == 2
    assert reference_run(records, "local", "other spec", "c") is None


def test_a_verdict_says_where_the_curves_parted_or_why_none_was_judged() -> None:
    reference = _record(7, metrics={"worker-0": {"loss": [1.0, 0.5]}})
    parted = judge_like(GATE, "debug", {"worker-0": {"loss": [1.0, 0.9]}}, reference, "c")
    assert (parted.verdict, parted.compared, parted.parted_at) == ("failed", 2, 1)
    assert parted.detail.endswith(
        "part at point 2 of 2: local 0.5, debug 0.9 (80.0% apart > loss_rtol 0.05)"
    )
    alike = judge_like(GATE, "debug", {"worker-0": {"loss": [1.0, 0.51]}}, reference, "c")
    assert alike.passed and alike.reference_id == 7
    none = judge_like(GATE, "debug", {"worker-0": {"loss": [1.0]}}, None, "c")
    assert none.verdict == "no reference" and "run the local stage first" in none.detail
    silent = judge_like(GATE, "debug", {"worker-0": {}}, reference, "c")
    assert not silent.passed and "no loss values in the log of debug" in silent.detail


def test_the_gate_checks_only_the_stages_after_the_one_it_names() -> None:
    assert [s for s in ("local", "debug", "formal") if applies(GATE, s)] == ["debug", "formal"]
    assert not applies(None, "debug")


def test_the_ledger_keeps_the_newest_verdict_per_code(tmp_path: Path) -> None:
    with Ledger(tmp_path / "ledger.db") as ledger:
        assert last_gate_verdict(ledger, "tiny", "c") is None
        save_gate_verdict(
            ledger,
            "tiny",
            GateVerdict("debug", "local", "loss", "failed", code_digest="c", record_id=3),
        )
        save_gate_verdict(
            ledger,
            "tiny",
            GateVerdict(
                "debug", "local", "loss", "passed", compared=4, code_digest="c", record_id=4
            ),
        )
        found = last_gate_verdict(ledger, "tiny", "c")
        assert found is not None and (found.verdict, found.record_id, found.compared) == (
            "passed",
            4,
            4,
        )
        assert last_gate_verdict(ledger, "tiny", "other code") is None

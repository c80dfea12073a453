"""A job's restarts read from ``status.running_records`` (the shape of the SDK's
``RunningRecord``/``RecoverRecord`` models), and how majob says them."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.service.base import Job
from majob.service.restarts import read_run_ends, restarts_summary

RESCHEDULED = {
    "start_at": 100,
    "end_at": 160,
    "start_type": "init_or_rescheduled",
    "end_reason": "node lost",
    "end_related_task": "worker-1",
    "end_recover": "job_reschedule",
    "recover_records": [
        {"fault_scenario": "node_fault", "recover": "job_reschedule", "recover_result": "success"}
    ],
}
LAST = {
    "start_at": 170,
    "end_at": 200,
    "end_reason": "node lost again",
    "end_related_task": "worker-1",
    "end_recover": "",
    "recover_records": [{"fault_scenario": "node_fault", "recover_result": "quotaExceeded"}],
}


def test_runs_that_ended_by_themselves_are_no_run_ends() -> None:
    assert read_run_ends([{"start_at": 1, "end_at": 2}, {"start_at": 3}]) == ()
    assert read_run_ends([{"start_at": 1, "end_at": 2, "end_reason": "Completed"}]) == ()
    assert read_run_ends(None) == () and read_run_ends([3, "x", None]) == ()


def test_restarts_and_the_final_fault_read_from_the_records() -> None:
    job = Job.from_wire(
        {"metadata": {"id": "j"}, "status": {"running_records": [RESCHEDULED, LAST]}}
    )
    assert [end.restarted for end in job.run_ends] == [True, False]
    (restart,) = job.restarts
    assert (restart.at, restart.task, restart.scenario) == (160, "worker-1", "node_fault")
    assert job.restarts_text() == ("1 restart: worker-1 (node_fault): node lost -> job_reschedule")
    assert job.run_ends[-1].text() == ("worker-1 (node_fault): node lost again -> no restart left")


def test_no_restarts_no_summary() -> None:
    assert restarts_summary(read_run_ends([LAST])) == ""
    assert Job.from_wire({"metadata": {"id": "j"}}).restarts == ()


def test_the_notebook_card_shows_the_restarts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAJOB_LEDGER", str(tmp_path / "ledger.db"))
    wire = {"metadata": {"id": "j", "name": "n"}, "status": {"running_records": [RESCHEDULED]}}
    shown = Job.from_wire(wire)._repr_html_() or ""
    assert "restarts" in shown and "1 restart: worker-1 (node_fault): node lost" in shown
    assert "restarts" not in (Job.from_wire({"metadata": {"id": "j"}})._repr_html_() or "")

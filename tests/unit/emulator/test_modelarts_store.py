"""The fake ModelArts's sqlite state: schema version, transitions, events."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from majob.emulator.modelarts.store import SCHEMA_VERSION, JobRecord, JobStore, SchemaError


def record(job_id: str = "j-1", phase: str = "Running") -> JobRecord:
    body = {"spec": {"resource": {"node_count": 2}}}
    return JobRecord(job_id, "name", "", phase, phase, 1, None, None, body, {"a": "b"})


def test_jobs_and_events_survive_reopening(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    store.insert(record())
    store.add_event("j-1", "hello", "Warning")
    store.close()
    again = JobStore(tmp_path)
    try:
        job = again.get("j-1")
        assert (
            job is not None
            and job.annotations == {"a": "b"}
            and job.tasks == ["worker-0", "worker-1"]
        )
        assert [(e.level, e.message) for e in again.events("j-1")] == [("Warning", "hello")]
        journal = again._db.execute("PRAGMA journal_mode").fetchone()[0]
        assert journal == "wal"
    finally:
        again.close()


def test_a_transition_happens_only_from_the_allowed_phases(tmp_path: Path) -> None:
    store = JobStore(tmp_path)
    try:
        store.insert(record(phase="Completed"))
        assert not store.transition("j-1", ("Running",), phase="Terminating")
        assert store.transition("j-1", ("Completed",), phase="Failed", task_statuses=[{"x": 1}])
        job = store.get("j-1")
        assert job is not None and (job.phase, job.task_statuses) == ("Failed", [{"x": 1}])
        store.delete("j-1")
        assert store.get("j-1") is None and list(store.events("j-1")) == []
    finally:
        store.close()


def test_a_newer_schema_is_refused(tmp_path: Path) -> None:
    JobStore(tmp_path).close()
    db = sqlite3.connect(tmp_path / "modelarts.db")
    db.execute(f"PRAGMA user_version={SCHEMA_VERSION + 1}")
    db.close()
    with pytest.raises(SchemaError, match="upgrade majob or use another state dir"):
        JobStore(tmp_path)

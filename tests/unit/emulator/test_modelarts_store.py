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


def test_a_state_dir_of_the_first_schema_is_brought_up_with_its_jobs(tmp_path: Path) -> None:
    """An emulator state dir written before jobs had running records (schema 1) opens, keeps
    its jobs, and takes the new column."""
    db = sqlite3.connect(tmp_path / "modelarts.db")
    db.executescript(
        "CREATE TABLE jobs (id TEXT PRIMARY KEY, name TEXT NOT NULL, description TEXT NOT NULL "
        "DEFAULT '', phase TEXT NOT NULL, secondary_phase TEXT NOT NULL, create_time INTEGER "
        "NOT NULL, start_time INTEGER, end_time INTEGER, body TEXT NOT NULL, annotations TEXT "
        "NOT NULL DEFAULT '{}', task_statuses TEXT NOT NULL DEFAULT '[]', pids TEXT NOT NULL "
        "DEFAULT '[]');"
        "INSERT INTO jobs (id, name, phase, secondary_phase, create_time, body) "
        "VALUES ('old', 'n', 'Completed', 'Completed', 1, '{}');"
        "PRAGMA user_version=1;"
    )
    db.close()
    store = JobStore(tmp_path)
    try:
        old = store.get("old")
        assert old is not None and (old.phase, old.running_records) == ("Completed", [])
        store.update("old", running_records=[{"start_at": 1}])
        again = store.get("old")
        assert again is not None and again.running_records == [{"start_at": 1}]
    finally:
        store.close()

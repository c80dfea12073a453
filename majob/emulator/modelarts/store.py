"""The fake ModelArts's state in stdlib ``sqlite3``: jobs and their events survive a restart.

One database file (WAL journal, a busy timeout so the daemon and a reader never trip on each
other, ``PRAGMA user_version`` as the schema version). One connection, guarded by a lock: the
HTTP threads and the job executors share it. Task logs are plain files next to the database
(``jobs/<id>/logs/worker-<i>.log``): they are appended to by the job's processes directly.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majob.processes import ProcessRef

SCHEMA_VERSION = 2
_SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY,
    name TEXT NOT NULL,
    description TEXT NOT NULL DEFAULT '',
    phase TEXT NOT NULL,
    secondary_phase TEXT NOT NULL,
    create_time INTEGER NOT NULL,
    start_time INTEGER,
    end_time INTEGER,
    body TEXT NOT NULL,
    annotations TEXT NOT NULL DEFAULT '{}',
    task_statuses TEXT NOT NULL DEFAULT '[]',
    pids TEXT NOT NULL DEFAULT '[]',
    running_records TEXT NOT NULL DEFAULT '[]'
);
CREATE INDEX IF NOT EXISTS jobs_name ON jobs (name);
CREATE TABLE IF NOT EXISTS events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    job_id TEXT NOT NULL,
    time INTEGER NOT NULL,
    level TEXT NOT NULL,
    message TEXT NOT NULL,
    source TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS events_job ON events (job_id, seq);
"""
# What each version adds to the one before (a state dir of an older emulator is brought up).
_MIGRATIONS = {
    2: "ALTER TABLE jobs ADD COLUMN running_records TEXT NOT NULL DEFAULT '[]'",
}


def now_ms() -> int:
    return int(time.time() * 1000)


@dataclass
class JobRecord:
    """One job row. ``body`` is the create body as normalised at create time."""

    id: str
    name: str
    description: str
    phase: str
    secondary_phase: str
    create_time: int
    start_time: int | None
    end_time: int | None
    body: dict[str, Any]
    annotations: dict[str, str] = field(default_factory=dict)
    task_statuses: list[dict[str, Any]] = field(default_factory=list)
    # Each node's process (group leader) and when it started: a crashed emulator's are killed
    # at the next start only while the pid is still that process.
    pids: list[ProcessRef] = field(default_factory=list)
    # Each run of the job (the first, then one per restart): ``status.running_records``.
    running_records: list[dict[str, Any]] = field(default_factory=list)

    @property
    def node_count(self) -> int:
        return int(self.body.get("spec", {}).get("resource", {}).get("node_count", 1))

    @property
    def tasks(self) -> list[str]:
        return [f"worker-{i}" for i in range(self.node_count)]


@dataclass(frozen=True)
class EventRecord:
    time: int
    level: str
    message: str
    source: str


class SchemaError(Exception):
    """The database was written by a newer emulator."""


class JobStore:
    """Jobs and events in ``<directory>/modelarts.db``; logs under ``<directory>/jobs``."""

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        self.directory = directory
        self._lock = threading.RLock()
        self._db = sqlite3.connect(
            directory / "modelarts.db", check_same_thread=False, isolation_level=None
        )
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.execute("PRAGMA synchronous=NORMAL")
        version = int(self._db.execute("PRAGMA user_version").fetchone()[0])
        if version > SCHEMA_VERSION:
            self._db.close()
            raise SchemaError(
                f"{directory / 'modelarts.db'} has schema {version}; this majob knows "
                f"{SCHEMA_VERSION}: upgrade majob or use another state dir"
            )
        if version and version < SCHEMA_VERSION:
            for step in range(version + 1, SCHEMA_VERSION + 1):
                self._db.execute(_MIGRATIONS[step])
        self._db.executescript(_SCHEMA)
        self._db.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def job_dir(self, job_id: str) -> Path:
        return self.directory / "jobs" / job_id

    def log_path(self, job_id: str, task: str) -> Path:
        return self.job_dir(job_id) / "logs" / f"{task}.log"

    # -- jobs --------------------------------------------------------------------------------

    def insert(self, job: JobRecord) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO jobs (id, name, description, phase, secondary_phase, create_time, "
                "start_time, end_time, body, annotations, task_statuses, pids) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    job.id,
                    job.name,
                    job.description,
                    job.phase,
                    job.secondary_phase,
                    job.create_time,
                    job.start_time,
                    job.end_time,
                    json.dumps(job.body),
                    json.dumps(job.annotations),
                    json.dumps(job.task_statuses),
                    _processes_json(job.pids),
                ),
            )

    def get(self, job_id: str) -> JobRecord | None:
        with self._lock:
            row = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE id = ?", (job_id,)
            ).fetchone()
        return _job(row) if row else None

    def all(self) -> list[JobRecord]:
        with self._lock:
            rows = self._db.execute(f"SELECT {_COLUMNS} FROM jobs ORDER BY create_time").fetchall()
        return [_job(row) for row in rows]

    def named(self, name: str) -> list[JobRecord]:
        """Every job (in any phase) called ``name``, oldest first."""
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE name = ? ORDER BY create_time", (name,)
            ).fetchall()
        return [_job(row) for row in rows]

    def with_phases(self, phases: Sequence[str]) -> list[JobRecord]:
        marks = ",".join("?" * len(phases))
        with self._lock:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM jobs WHERE phase IN ({marks}) ORDER BY create_time",
                tuple(phases),
            ).fetchall()
        return [_job(row) for row in rows]

    def update(self, job_id: str, **values: Any) -> None:
        """Set columns; dict/list values are stored as JSON."""
        if not values:
            return
        names = ", ".join(f"{name} = ?" for name in values)
        params = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in values.values()]
        with self._lock:
            self._db.execute(f"UPDATE jobs SET {names} WHERE id = ?", (*params, job_id))

    def set_processes(self, job_id: str, processes: Sequence[ProcessRef]) -> None:
        with self._lock:
            self._db.execute(
                "UPDATE jobs SET pids = ? WHERE id = ?", (_processes_json(processes), job_id)
            )

    def transition(self, job_id: str, allowed: Sequence[str], **values: Any) -> bool:
        """Set columns only while the job's phase is one of ``allowed`` (atomically)."""
        marks = ",".join("?" * len(allowed))
        names = ", ".join(f"{name} = ?" for name in values)
        params = [json.dumps(v) if isinstance(v, (dict, list)) else v for v in values.values()]
        with self._lock:
            cursor = self._db.execute(
                f"UPDATE jobs SET {names} WHERE id = ? AND phase IN ({marks})",
                (*params, job_id, *allowed),
            )
            return cursor.rowcount == 1

    def delete(self, job_id: str) -> None:
        with self._lock:
            self._db.execute("DELETE FROM jobs WHERE id = ?", (job_id,))
            self._db.execute("DELETE FROM events WHERE job_id = ?", (job_id,))

    # -- events ------------------------------------------------------------------------------

    def add_event(
        self, job_id: str, message: str, level: str = "Info", source: str = "Job"
    ) -> None:
        with self._lock:
            self._db.execute(
                "INSERT INTO events (job_id, time, level, message, source) VALUES (?, ?, ?, ?, ?)",
                (job_id, now_ms(), level, message, source),
            )

    def events(self, job_id: str) -> Iterator[EventRecord]:
        with self._lock:
            rows = self._db.execute(
                "SELECT time, level, message, source FROM events WHERE job_id = ? ORDER BY seq",
                (job_id,),
            ).fetchall()
        for row in rows:
            yield EventRecord(*row)


_COLUMNS = (
    "id, name, description, phase, secondary_phase, create_time, start_time, end_time, body, "
    "annotations, task_statuses, pids, running_records"
)


def _job(row: tuple[Any, ...]) -> JobRecord:
    return JobRecord(
        id=row[0],
        name=row[1],
        description=row[2],
        phase=row[3],
        secondary_phase=row[4],
        create_time=row[5],
        start_time=row[6],
        end_time=row[7],
        body=json.loads(row[8]),
        annotations=json.loads(row[9]),
        task_statuses=json.loads(row[10]),
        pids=_processes(json.loads(row[11])),
        running_records=json.loads(row[12]),
    )


def _processes_json(processes: Sequence[ProcessRef]) -> str:
    return json.dumps([{"pid": p.pid, "started": p.started} for p in processes])


def _processes(data: Any) -> list[ProcessRef]:
    """The ``pids`` column: ``{"pid", "started"}`` objects (a bare pid, as an older emulator
    wrote, has no start time and is never signalled)."""
    out: list[ProcessRef] = []
    for item in data if isinstance(data, list) else []:
        if isinstance(item, int):
            out.append(ProcessRef(item))
        elif isinstance(item, dict) and isinstance(item.get("pid"), int):
            out.append(ProcessRef(item["pid"], str(item.get("started") or "")))
    return out

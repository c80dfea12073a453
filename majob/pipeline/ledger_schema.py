"""The ledger's schema: the migrations that build its table, and the record a row reads as.

The schema is versioned with ``PRAGMA user_version`` and grown by ``MIGRATIONS``, in order;
``majob.pipeline.ledger`` applies them and refuses a ledger of a newer version.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from majob import display
from majob.processes import ProcessRef, pid_alive, this_host
from majob.text import counted

# Each entry takes the ledger from version i to i + 1.
MIGRATIONS: tuple[str, ...] = (
    """
    CREATE TABLE records (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        spec_name TEXT NOT NULL,
        spec_path TEXT NOT NULL DEFAULT '',
        stage TEXT NOT NULL,
        spec_digest TEXT NOT NULL,
        code_digest TEXT NOT NULL,
        result TEXT NOT NULL,
        reason TEXT NOT NULL DEFAULT '',
        job_id TEXT NOT NULL DEFAULT '',
        duration REAL,
        metrics TEXT NOT NULL DEFAULT '{}',
        outputs TEXT NOT NULL DEFAULT '[]',
        majob_version TEXT NOT NULL,
        started_at TEXT NOT NULL,
        override TEXT NOT NULL DEFAULT '',
        pid INTEGER NOT NULL DEFAULT 0,
        spec_json TEXT NOT NULL DEFAULT '{}',
        code_files TEXT NOT NULL DEFAULT '{}'
    );
    CREATE INDEX records_by_spec ON records (spec_name, stage, id);
    """,
    # Who runs a record: a pid means nothing on another host, nor once another process has it.
    """
    ALTER TABLE records ADD COLUMN host TEXT NOT NULL DEFAULT '';
    ALTER TABLE records ADD COLUMN pid_started TEXT NOT NULL DEFAULT ''
    """,
    # The cloud job's restarts (ModelArts fault tolerance): when, on which task, why, and what
    # followed, one JSON object each (``majob.service.restarts.RunEnd.to_json``).
    """
    ALTER TABLE records ADD COLUMN restarts TEXT NOT NULL DEFAULT '[]'
    """,
    # When a re-run took over the record its killed pipeline left (its job followed and judged
    # in the same row: one job, one record), and ``refused`` joins the results (a stage the
    # pre-flight turned away ran nothing: it is not a failure of the stage). An older majob
    # reads ``refused`` as one more result that is not ``passed``, so its gates are the same.
    """
    ALTER TABLE records ADD COLUMN adopted_at TEXT NOT NULL DEFAULT ''
    """,
    # The stage's step time (issue 33): p50 and p95 of its optimizer steps in milliseconds, from
    # the nodes' step files (NULL: none was written, or an older majob's record).
    """
    ALTER TABLE records ADD COLUMN step_p50_ms REAL;
    ALTER TABLE records ADD COLUMN step_p95_ms REAL
    """,
    # What a profile of the spec's code said (issue 33, ``perf_records.py``): the checklist's
    # "performance diagnosed" item is done when one matches the code's current digest.
    """
    CREATE TABLE perf_records (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        spec_name TEXT NOT NULL,
        stage TEXT NOT NULL,
        spec_digest TEXT NOT NULL,
        code_digest TEXT NOT NULL,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        step_p50_ms REAL,
        step_p95_ms REAL,
        ranks INTEGER NOT NULL,
        findings TEXT NOT NULL DEFAULT '[]',
        partial TEXT NOT NULL DEFAULT '',
        majob_version TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    );
    CREATE INDEX perf_records_by_spec ON perf_records (spec_name, code_digest, id)
    """,
    # What ``majob data stage`` copied OBS -> SFS Turbo and verified (issue 38, data_stages.py):
    # the next stage of an unchanged source is skipped; the checklist's data item reads it.
    """
    CREATE TABLE data_stages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        source TEXT NOT NULL,
        target TEXT NOT NULL,
        nfs TEXT NOT NULL,
        listing_digest TEXT NOT NULL,
        files INTEGER NOT NULL,
        bytes INTEGER NOT NULL,
        job_id TEXT NOT NULL,
        majob_version TEXT NOT NULL,
        staged_at TEXT NOT NULL
    );
    CREATE INDEX data_stages_by_source ON data_stages (source, target, id)
    """,
    # What each stage's ``expect.precision`` gate said (issue 39, ``precision_gates.py``): the
    # run it judged, the recorded run it compared with, where the curves parted; the
    # checklist's precision item reads it.
    """
    CREATE TABLE precision_gates (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        spec_name TEXT NOT NULL,
        stage TEXT NOT NULL,
        like_stage TEXT NOT NULL,
        record_id INTEGER NOT NULL,
        reference_id INTEGER,
        code_digest TEXT NOT NULL,
        metric TEXT NOT NULL,
        compared INTEGER NOT NULL,
        parted_at INTEGER,
        verdict TEXT NOT NULL,
        detail TEXT NOT NULL DEFAULT '',
        majob_version TEXT NOT NULL,
        recorded_at TEXT NOT NULL
    );
    CREATE INDEX precision_gates_by_spec ON precision_gates (spec_name, code_digest, id)
    """,
)
SCHEMA_VERSION = len(MIGRATIONS)

RESULTS = ("running", "passed", "failed", "interrupted", "refused")


@dataclass(frozen=True)
class StageRecord:
    """One stage run as the ledger keeps it.

    ``metrics`` holds each node's series (``{"worker-0": {"loss": [..]}}``), ``outputs`` the
    output files seen, ``override`` the reason given with ``--force``, ``spec_json`` the
    normalised spec and ``code_files`` each uploaded file's digest (what a refusal compares)."""

    id: int
    spec_name: str
    stage: str
    spec_digest: str
    code_digest: str
    result: str
    reason: str = ""
    job_id: str = ""
    duration: float | None = None
    metrics: Mapping[str, Mapping[str, list[float]]] = field(default_factory=dict)
    outputs: tuple[str, ...] = ()
    majob_version: str = ""
    started_at: str = ""
    override: str = ""
    pid: int = 0
    spec_path: str = ""
    spec_json: Mapping[str, Any] = field(default_factory=dict)
    code_files: Mapping[str, str] = field(default_factory=dict)
    host: str = ""  # where its pipeline ran ("": an older majob's record)
    pid_started: str = ""  # when its pid started (``majob.processes``)
    # the job's early run ends (restarts, and the fault that ended it if one did)
    restarts: tuple[Mapping[str, Any], ...] = ()
    # when a re-run adopted the record its killed pipeline left ("": never)
    adopted_at: str = ""
    step_p50_ms: float | None = None  # the stage's step time (None: no step file)
    step_p95_ms: float | None = None

    @property
    def passed(self) -> bool:
        return self.result == "passed"

    @property
    def elsewhere(self) -> bool:
        """Written by a pipeline on another host."""
        return bool(self.host) and self.host != this_host()

    @property
    def effective_result(self) -> str:
        """``running`` only while its pipeline process lives (or may: on another host);
        ``interrupted`` after."""
        if self.result != "running" or self.elsewhere:
            return self.result
        if self.pid_started:
            alive = ProcessRef(self.pid, self.pid_started).is_running()
        else:  # an older majob's record: its bare pid is all there is
            alive = pid_alive(self.pid)
        return "running" if alive else "interrupted"

    def __repr__(self) -> str:
        # One line: the spec and code it was judged on are in the ledger, not on the screen.
        job = f", job {self.job_id[:8]}" if self.job_id else ""
        reason = f": {self.reason}" if self.reason else ""
        return (
            f"<StageRecord #{self.id} {self.spec_name} {self.stage} {self.effective_result} in "
            f"{display.seconds(self.duration)}{job} ({self.started_at}){reason}>"
        )

    def last_metrics(self) -> dict[str, float]:
        """Each metric's last value (the last node that reported it wins)."""
        out: dict[str, float] = {}
        for series in self.metrics.values():
            for name, values in series.items():
                if values:
                    out[name] = values[-1]
        return out


class StageRecords(list[StageRecord]):
    """Ledger records, newest first (``Pipeline.history()``): a list that reads as a short
    text table, and in a notebook as an HTML one (drawn by ``majob.notebook``)."""

    def __repr__(self) -> str:
        lines = [f"<{counted(len(self), 'ledger record')}, newest first>"]
        lines += [f"  {record!r}" for record in self]
        return "\n".join(lines)

    def _repr_html_(self) -> str | None:
        return display.html(self)


def record_from_row(row: sqlite3.Row) -> StageRecord:
    return StageRecord(
        id=int(row["id"]),
        spec_name=row["spec_name"],
        stage=row["stage"],
        spec_digest=row["spec_digest"],
        code_digest=row["code_digest"],
        result=row["result"],
        reason=row["reason"],
        job_id=row["job_id"],
        duration=row["duration"],
        metrics=json.loads(row["metrics"] or "{}"),
        outputs=tuple(json.loads(row["outputs"] or "[]")),
        majob_version=row["majob_version"],
        started_at=row["started_at"],
        override=row["override"],
        pid=int(row["pid"]),
        spec_path=row["spec_path"],
        spec_json=json.loads(row["spec_json"] or "{}"),
        code_files=json.loads(row["code_files"] or "{}"),
        host=row["host"],
        pid_started=row["pid_started"],
        restarts=tuple(json.loads(row["restarts"] or "[]")),
        adopted_at=row["adopted_at"],
        step_p50_ms=row["step_p50_ms"],
        step_p95_ms=row["step_p95_ms"],
    )

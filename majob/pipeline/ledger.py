"""The ledger: one record per stage run, in ``.majob/ledger.db`` (stdlib ``sqlite3``) at the
spec's project root (``project.py``: the git work tree, else the spec's directory), wherever the
command runs; ``$MAJOB_LEDGER`` or ``--ledger`` name another.

Why sqlite: two pipelines writing at once must lose nothing, and a process killed mid-write must
leave a readable file. WAL mode gives both (a write is one transaction, readers never block it),
and the busy timeout makes a second writer wait for the first instead of failing.

WAL needs memory shared by every process that opens the database, which processes on two hosts
of an NFS or SMB share do not have. A ledger on a network file system (``netfs.py``) uses the
rollback journal (``journal_mode=DELETE``) instead, and every use of it holds a lock file next
to it (``ledger.db.lock``): sqlite's own byte-range locks are not trusted there.

A record is written when a stage starts (``result = 'running'``, with the pipeline's host, pid
and the pid's start time) and finished when it ends. A ``running`` record of this host whose
process is gone (or whose pid another process has taken since) reads as ``interrupted``; one of
another host stays ``running``: its process cannot be seen from here.

The schema is versioned with ``PRAGMA user_version`` and grown by the ``MIGRATIONS`` of
``ledger_schema.py``, in order. A ledger written by a newer majob (a higher version) is refused
before anything is written to it.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sqlite3
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from majob.errors import LedgerError
from majob.pipeline.ledger_schema import (
    MIGRATIONS,
    RESULTS,
    SCHEMA_VERSION,
    StageRecord,
    record_from_row,
)
from majob.pipeline.netfs import Mount, network_filesystem
from majob.pipeline.project import project_root
from majob.processes import ProcessRef, this_host
from majob.retry import call_retrying
from majob.version import __version__

LEDGER_FILE = Path(".majob") / "ledger.db"
LEDGER_VARIABLE = "MAJOB_LEDGER"  # one ledger for every working directory (CI, a shared disk)
BUSY_TIMEOUT_MS = 30_000
OPEN_ATTEMPTS = 200  # more than fit in the busy timeout: the timeout is what ends the tries


def _now() -> str:
    return dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")


def default_ledger_path(spec_file: Path | None = None) -> Path:
    """``$MAJOB_LEDGER``, else ``.majob/ledger.db`` at the project root of ``spec_file`` (of
    the current directory without one)."""
    from_env = os.environ.get(LEDGER_VARIABLE)
    if from_env:
        return Path(from_env)
    return project_root(spec_file or Path.cwd()) / LEDGER_FILE


class Ledger:
    """The ledger at ``path`` (default: ``default_ledger_path(spec_file)``), created on first
    write."""

    def __init__(
        self,
        path: Path | None = None,
        *,
        spec_file: Path | None = None,
        mounts: Sequence[Mount] | None = None,
    ) -> None:
        self.path = (path or default_ledger_path(spec_file)).resolve()
        self._mounts = mounts  # None: this host's mount table
        self._db: sqlite3.Connection | None = None
        self._network_fs: str | None = None
        self._checked_fs = False

    @property
    def network_fs(self) -> str | None:
        """The network file system type the ledger is on (nfs4, cifs, ...), or None."""
        if not self._checked_fs:
            self._network_fs = network_filesystem(self.path.parent, self._mounts)
            self._checked_fs = True
        return self._network_fs

    @property
    def journal_mode(self) -> str:
        return "delete" if self.network_fs else "wal"

    @contextmanager
    def _guard(self) -> Iterator[None]:
        """On a network file system, hold the lock file for the duration."""
        if not self.network_fs:
            yield
            return
        from filelock import FileLock, Timeout

        try:
            with FileLock(f"{self.path}.lock", timeout=BUSY_TIMEOUT_MS / 1000):
                yield
        except Timeout:
            raise LedgerError(
                f"the ledger {self.path} stayed locked for {BUSY_TIMEOUT_MS // 1000}s "
                f"(it is on {self.network_fs}: {self.path}.lock serialises its users)",
                hint="another majob holds it; if none runs, the file system's locking is "
                "broken: use a ledger on a local disk (--ledger or MAJOB_LEDGER)",
            ) from None

    # -- opening -------------------------------------------------------------------------------

    def _connect(self) -> sqlite3.Connection:
        if self._db is not None:
            return self._db
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._guard():
            return self._connect_guarded()

    def _connect_guarded(self) -> sqlite3.Connection:
        if self.path.exists():
            self._check_version()
        # Two processes opening a new ledger at once race to switch it to WAL and to migrate it;
        # SQLite answers the loser "database is locked" at once (the journal-mode switch does not
        # wait for the busy timeout), so the whole opening is tried again within that timeout.
        try:
            self._db = call_retrying(
                self._open,
                retry_if=_is_locked,
                retries=OPEN_ATTEMPTS,
                timeout=BUSY_TIMEOUT_MS / 1000,
                base_delay=0.01,
                max_delay=0.5,
            )
        except sqlite3.Error as error:
            raise self._unusable(error) from None
        return self._db

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, timeout=BUSY_TIMEOUT_MS / 1000, isolation_level=None)
        try:
            db.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            if version > SCHEMA_VERSION:  # it became newer since the check: still refused
                raise self._newer(version)
            if self.journal_mode == "wal":
                db.execute("PRAGMA journal_mode = WAL")
                db.execute("PRAGMA synchronous = NORMAL")
            else:
                db.execute("PRAGMA journal_mode = DELETE")
                db.execute("PRAGMA synchronous = FULL")
            if version < SCHEMA_VERSION:
                self._migrate(db)
        except BaseException:
            db.close()
            raise
        return db

    def _check_version(self) -> None:
        """Refuse a ledger from a newer majob through a read-only connection: nothing (not even
        a WAL checkpoint on close) is written to it."""
        try:
            db = sqlite3.connect(
                f"{self.path.as_uri()}?mode=ro", uri=True, timeout=BUSY_TIMEOUT_MS / 1000
            )
        except sqlite3.Error as error:
            raise self._unusable(error) from None
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
        except sqlite3.DatabaseError as error:
            raise self._unusable(error) from None
        finally:
            db.close()
        if version > SCHEMA_VERSION:
            raise self._newer(version)

    def _newer(self, version: int) -> LedgerError:
        return LedgerError(
            f"{self.path} was written by a newer majob (ledger schema {version}; this majob "
            f"{__version__} reads up to {SCHEMA_VERSION})",
            hint="upgrade majob (pip install -U majob); the ledger was not changed",
        )

    def _migrate(self, db: sqlite3.Connection) -> None:
        db.execute("BEGIN IMMEDIATE")  # one migrator at a time; the others then see it done
        try:
            version = int(db.execute("PRAGMA user_version").fetchone()[0])
            for step in range(version, SCHEMA_VERSION):
                for statement in MIGRATIONS[step].split(";"):
                    if statement.strip():
                        db.execute(statement)
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise

    def _unusable(self, error: BaseException) -> LedgerError:
        return LedgerError(
            f"cannot use the ledger {self.path}: {error}",
            hint="move the file aside to start a new ledger (the pipeline then runs every stage)",
        )

    def close(self) -> None:
        if self._db is not None:
            self._db.close()
            self._db = None

    def __enter__(self) -> Ledger:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def writing(self) -> Iterator[sqlite3.Connection]:
        """The connection, inside one write transaction (``perf_records.py`` writes its table
        through it too)."""
        db = self._connect()
        with self._guard():
            try:
                db.execute("BEGIN IMMEDIATE")
                yield db
                db.execute("COMMIT")
            except sqlite3.DatabaseError as error:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise self._unusable(error) from None
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise

    @contextmanager
    def reading(self) -> Iterator[sqlite3.Connection]:
        """The connection, rows as ``sqlite3.Row``, for one read."""
        db = self._connect()
        with self._guard():
            db.row_factory = sqlite3.Row
            try:
                yield db
            except sqlite3.DatabaseError as error:
                raise self._unusable(error) from None
            finally:
                db.row_factory = None

    # -- writing -------------------------------------------------------------------------------

    def start(
        self,
        *,
        spec_name: str,
        stage: str,
        spec_digest: str,
        code_digest: str,
        spec_path: str = "",
        override: str = "",
        spec_json: Mapping[str, Any] | None = None,
        code_files: Mapping[str, str] | None = None,
    ) -> int:
        """Record that ``stage`` starts; its record id."""
        this = ProcessRef.current()
        with self.writing() as db:
            cursor = db.execute(
                "INSERT INTO records (spec_name, spec_path, stage, spec_digest, code_digest, "
                "result, majob_version, started_at, override, pid, spec_json, code_files, host, "
                "pid_started) VALUES (?, ?, ?, ?, ?, 'running', ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    spec_name,
                    spec_path,
                    stage,
                    spec_digest,
                    code_digest,
                    __version__,
                    _now(),
                    override,
                    this.pid,
                    json.dumps(spec_json or {}, sort_keys=True),
                    json.dumps(code_files or {}, sort_keys=True),
                    this_host(),
                    this.started,
                ),
            )
            return int(cursor.lastrowid or 0)

    def set_job(self, record_id: int, job_id: str) -> None:
        """Remember the cloud job as soon as it exists (a re-run can follow it)."""
        with self.writing() as db:
            db.execute("UPDATE records SET job_id = ? WHERE id = ?", (job_id, record_id))

    def adopt(self, record: StageRecord) -> bool:
        """Take over ``record`` (one a dead pipeline left): it is ``running`` again, as this
        process's, and says when it was adopted. False when another process took it first
        (the update only lands while the record still names the process that left it)."""
        this = ProcessRef.current()
        with self.writing() as db:
            cursor = db.execute(
                "UPDATE records SET result = 'running', host = ?, pid = ?, pid_started = ?, "
                "adopted_at = ? WHERE id = ? AND result = ? AND host = ? AND pid = ? "
                "AND pid_started = ?",
                (
                    this_host(),
                    this.pid,
                    this.started,
                    _now(),
                    record.id,
                    record.result,
                    record.host,
                    record.pid,
                    record.pid_started,
                ),
            )
            return cursor.rowcount == 1

    def finish(
        self,
        record_id: int,
        *,
        result: str,
        reason: str = "",
        duration: float | None = None,
        metrics: Mapping[str, Mapping[str, Sequence[float]]] | None = None,
        outputs: Sequence[str] = (),
        job_id: str | None = None,
        restarts: Sequence[Mapping[str, Any]] = (),
        step_ms: tuple[float, float] | None = None,
    ) -> None:
        """Record how the stage ended (``restarts``: its job's early run ends; ``step_ms``: its
        step time's p50 and p95)."""
        if result not in RESULTS:
            raise ValueError(f"result {result!r} is not one of {RESULTS}")
        series = {k: {m: list(v) for m, v in s.items()} for k, s in (metrics or {}).items()}
        with self.writing() as db:
            db.execute(
                "UPDATE records SET result = ?, reason = ?, duration = ?, metrics = ?, outputs = ?,"
                " job_id = COALESCE(?, job_id), restarts = ?, step_p50_ms = ?, step_p95_ms = ?"
                " WHERE id = ?",
                (
                    *(result, reason, duration, json.dumps(series), json.dumps(list(outputs))),
                    *(job_id, json.dumps([dict(r) for r in restarts])),
                    *(step_ms or (None, None)),
                    record_id,
                ),
            )

    # -- reading -------------------------------------------------------------------------------

    def records(
        self, spec_name: str | None = None, *, stage: str | None = None, limit: int | None = None
    ) -> list[StageRecord]:
        """Records, newest first; only ``spec_name``'s / ``stage``'s when given."""
        if not self.path.exists():
            return []
        where, args = [], []
        if spec_name is not None:
            where.append("spec_name = ?")
            args.append(spec_name)
        if stage is not None:
            where.append("stage = ?")
            args.append(stage)
        sql = "SELECT * FROM records"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY id DESC"
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        with self.reading() as db:
            rows = db.execute(sql, args).fetchall()
        return [record_from_row(row) for row in rows]

    def get(self, record_id: int) -> StageRecord:
        with self.reading() as db:
            row = db.execute("SELECT * FROM records WHERE id = ?", (record_id,)).fetchone()
        if row is None:
            raise LedgerError(f"the ledger {self.path} has no record {record_id}")
        return record_from_row(row)

    def by_job(self, job_id: str) -> StageRecord | None:
        """The newest record of the cloud job ``job_id``."""
        if not self.path.exists():
            return None
        with self.reading() as db:
            row = db.execute(
                "SELECT * FROM records WHERE job_id = ? ORDER BY id DESC LIMIT 1", (job_id,)
            ).fetchone()
        return record_from_row(row) if row is not None else None


def _is_locked(error: BaseException) -> bool:
    return isinstance(error, sqlite3.OperationalError) and (
        "locked" in str(error) or "busy" in str(error)
    )

"""What ``majob data stage`` copied from OBS to SFS Turbo, in the ledger's ``data_stages`` table.

Only a stage whose transfer job ended with the engine's verified ``majob-stage-done`` line is
recorded: an interrupted or failed one is not presented as staged. A record keeps the source's
listing digest (``data.manifest.listing_digest``: key, size, ETag of every object), so the next
``majob data stage`` of an unchanged source is skipped without a job, and the NFS path a job
mounts to read it, which ``majob checklist`` matches against a spec's ``volumes:``.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from majob.pipeline.ledger import Ledger
from majob.version import __version__


@dataclass(frozen=True)
class DataStage:
    id: int
    source: str  # obs://bucket/folder/
    target: str  # sfs://server/path
    nfs: str  # server:/path, what volumes: mounts
    listing_digest: str
    files: int
    bytes: int
    job_id: str
    staged_at: str


def save_data_stage(
    ledger: Ledger,
    *,
    source: str,
    target: str,
    nfs: str,
    listing_digest: str,
    files: int,
    size: int,
    job_id: str,
) -> int:
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    with ledger.writing() as db:
        cursor = db.execute(
            "INSERT INTO data_stages (source, target, nfs, listing_digest, files, bytes, job_id, "
            "majob_version, staged_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (source, target, nfs, listing_digest, files, size, job_id, __version__, now),
        )
        return int(cursor.lastrowid or 0)


def last_data_stage(ledger: Ledger, source: str, target: str) -> DataStage | None:
    """The newest recorded stage of ``source`` into ``target``."""
    found = _select(ledger, "WHERE source = ? AND target = ?", (source, target), 1)
    return found[0] if found else None


def stages_into(ledger: Ledger, nfs_paths: list[str]) -> dict[str, DataStage]:
    """The newest stage into each of ``nfs_paths`` (a spec's volumes, ``SERVER:/PATH`` with or
    without a trailing ``/``) that has one, by the path as given."""
    found = {}
    for nfs in nfs_paths:
        rows = _select(ledger, "WHERE nfs = ?", (nfs.rstrip("/") or nfs,), 1)
        if rows:
            found[nfs] = rows[0]
    return found


def _select(ledger: Ledger, where: str, args: tuple[str, ...], limit: int) -> list[DataStage]:
    if not ledger.path.exists():
        return []
    with ledger.reading() as db:
        rows = db.execute(
            "SELECT id, source, target, nfs, listing_digest, files, bytes, job_id, staged_at "
            f"FROM data_stages {where} ORDER BY id DESC LIMIT {int(limit)}",
            args,
        ).fetchall()
    return [DataStage(*tuple(row)) for row in rows]

"""What each diagnosed profile of a spec's code said, in the ledger's ``perf_records`` table.

Written by ``majob run --perf``, ``majob pipeline --perf`` (and a stage ``expect.perf``
profiles) and by ``majob perf`` on a run or job majob knows the spec and code of; read by
``majob checklist``: its "performance diagnosed" item is done when a record matches the spec's
current code digest. A record keeps the step time, how many ranks were read, the first findings
(title, share, advice) and whether the profile was partial: what the checklist and
``majob history`` need, not the profile (which stays where it was written).
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from majob.pipeline.ledger import Ledger
from majob.version import __version__

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis

KEPT_FINDINGS = 5


@dataclass(frozen=True)
class PerfBasis:
    """Whose profile it is: the spec, the stage, the code and spec digests it ran."""

    spec_name: str
    stage: str
    spec_digest: str
    code_digest: str


@dataclass(frozen=True)
class PerfRecord:
    id: int
    spec_name: str
    stage: str
    code_digest: str
    source: str  # the command that diagnosed it: "majob run --perf", "majob perf", ...
    target: str  # the run id, job or path the profile came from
    step_p50_ms: float | None
    step_p95_ms: float | None
    ranks: int
    findings: tuple[dict[str, Any], ...]
    partial: str
    recorded_at: str

    def describe(self) -> str:
        """``local, step p50 12.3 ms, p95 14 ms; top: Data loading (31%)``."""
        step = (
            f"step p50 {self.step_p50_ms:.3g} ms, p95 {self.step_p95_ms:.3g} ms"
            if self.step_p50_ms is not None and self.step_p95_ms is not None
            else "no step time"
        )
        top = self.findings[0] if self.findings else None
        found = (
            f"top finding: {top.get('title')} ({100 * float(top.get('share', 0)):.0f}% of a step)"
            if top
            else "nothing worth 2% of a step"
        )
        partial = "; partial profile" if self.partial else ""
        return f"{self.stage}, {step}; {found}{partial}"


def save_perf_record(
    ledger: Ledger, basis: PerfBasis, diagnosis: Diagnosis, *, source: str, target: str
) -> int:
    """Record ``diagnosis`` of ``basis``'s code; the new record's id."""
    p50, p95 = _step_time(diagnosis)
    findings = [
        {
            "title": f.title,
            "share": round(f.share, 4),
            "saving_ms": round(f.saving_ms, 3),
            "source": f.source,
            "advice": f.advice[0] if f.advice else "",
        }
        for f in diagnosis.findings[:KEPT_FINDINGS]
    ]
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    with ledger.writing() as db:
        cursor = db.execute(
            "INSERT INTO perf_records (spec_name, stage, spec_digest, code_digest, source, "
            "target, step_p50_ms, step_p95_ms, ranks, findings, partial, majob_version, "
            "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                *(basis.spec_name, basis.stage, basis.spec_digest, basis.code_digest),
                *(source, target, p50, p95, len(diagnosis.ranks), json.dumps(findings)),
                *("; ".join(diagnosis.partial), __version__, now),
            ),
        )
        return int(cursor.lastrowid or 0)


def _step_time(diagnosis: Diagnosis) -> tuple[float | None, float | None]:
    """The slowest rank's p50 and p95: the step every rank waits for."""
    timed = [r for r in diagnosis.ranks if r.step_ms]
    if not timed:
        return None, None
    slowest = max(timed, key=lambda r: r.p50)
    return slowest.p50, slowest.p95


def perf_records(
    ledger: Ledger, spec_name: str, *, code_digest: str | None = None, limit: int = 20
) -> list[PerfRecord]:
    """``spec_name``'s records, newest first; only those of ``code_digest`` when given."""
    if not ledger.path.exists():
        return []
    sql = "SELECT * FROM perf_records WHERE spec_name = ?"
    args: list[object] = [spec_name]
    if code_digest is not None:
        sql += " AND code_digest = ?"
        args.append(code_digest)
    sql += f" ORDER BY id DESC LIMIT {int(limit)}"
    with ledger.reading() as db:
        rows = db.execute(sql, args).fetchall()
    return [
        PerfRecord(
            id=int(row["id"]),
            spec_name=str(row["spec_name"]),
            stage=str(row["stage"]),
            code_digest=str(row["code_digest"]),
            source=str(row["source"]),
            target=str(row["target"]),
            step_p50_ms=row["step_p50_ms"],
            step_p95_ms=row["step_p95_ms"],
            ranks=int(row["ranks"]),
            findings=tuple(json.loads(row["findings"] or "[]")),
            partial=str(row["partial"]),
            recorded_at=str(row["recorded_at"]),
        )
        for row in rows
    ]

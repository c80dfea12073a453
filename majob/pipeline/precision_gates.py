"""What each stage's ``expect.precision`` gate said, in the ledger's ``precision_gates`` table.

One row per judged stage run: the run's record, the recorded run it was compared with (none
when there was none to compare with), how many points were compared and where the curves
parted. ``majob checklist``'s precision item reads the newest one of the current code.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from majob.pipeline.ledger import Ledger
from majob.version import __version__

VERDICTS = ("passed", "failed", "no reference")


@dataclass(frozen=True)
class GateVerdict:
    """One gate's judgement of one stage run."""

    stage: str
    like: str
    metric: str
    verdict: str  # one of VERDICTS
    compared: int = 0  # the points both curves had, up to the gate's steps
    parted_at: int | None = None  # the first point past loss_rtol (0-based), None: none
    detail: str = ""  # the line the pipeline printed
    reference_id: int | None = None  # the compared run's ledger record
    record_id: int = 0  # the judged run's ledger record
    code_digest: str = ""
    recorded_at: str = ""

    @property
    def passed(self) -> bool:
        return self.verdict == "passed"


def save_gate_verdict(ledger: Ledger, spec_name: str, verdict: GateVerdict) -> None:
    now = dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds")
    with ledger.writing() as db:
        db.execute(
            "INSERT INTO precision_gates (spec_name, stage, like_stage, record_id, reference_id, "
            "code_digest, metric, compared, parted_at, verdict, detail, majob_version, "
            "recorded_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (
                spec_name,
                verdict.stage,
                verdict.like,
                verdict.record_id,
                verdict.reference_id,
                verdict.code_digest,
                verdict.metric,
                verdict.compared,
                verdict.parted_at,
                verdict.verdict,
                verdict.detail,
                __version__,
                now,
            ),
        )


def last_gate_verdict(ledger: Ledger, spec_name: str, code_digest: str) -> GateVerdict | None:
    """The newest gate verdict on ``spec_name``'s runs of the code ``code_digest``."""
    if not ledger.path.exists():
        return None
    with ledger.reading() as db:
        row = db.execute(
            "SELECT stage, like_stage, metric, verdict, compared, parted_at, detail, "
            "reference_id, record_id, code_digest, recorded_at FROM precision_gates "
            "WHERE spec_name = ? AND code_digest = ? ORDER BY id DESC LIMIT 1",
            (spec_name, code_digest),
        ).fetchone()
    return GateVerdict(*tuple(row)) if row is not None else None

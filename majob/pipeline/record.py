"""One stage's ledger record, kept the same way by the pipeline and by ``majob submit --wait``.

The record opens when the stage starts (the pipeline) or when its job exists (a submit by
hand), learns its job as soon as there is one (a re-run can follow it), and closes with the
stage's judged ``Outcome``, or as ``interrupted`` (Ctrl-C; the next run adopts the job), or
``refused`` (the pre-flight or a job in the way turned it away: nothing ran). A re-run that
adopts the job a killed run left takes that run's record over instead of opening one
(``pipeline/adopt.py``).
"""

from __future__ import annotations

import time

from majob.errors import MajobError, PreflightError, StageRefused
from majob.pipeline.digests import Fingerprint
from majob.pipeline.judge import Outcome
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord


class StageRecorder:
    """The ledger record of one run of ``stage`` for ``spec_name``, with ``fingerprint``."""

    def __init__(
        self,
        ledger: Ledger,
        spec_name: str,
        stage: str,
        fingerprint: Fingerprint,
        *,
        spec_path: str = "",
        override: str = "",
    ) -> None:
        self.ledger = ledger
        self.spec_name = spec_name
        self.stage = stage
        self.fingerprint = fingerprint
        self.spec_path = spec_path
        self.override = override
        self.record_id: int | None = None
        self._started = time.monotonic()

    def start(self) -> int:
        """Open the record (``running``); its id."""
        self._started = time.monotonic()
        self.record_id = self.ledger.start(
            spec_name=self.spec_name,
            spec_path=self.spec_path,
            stage=self.stage,
            spec_digest=self.fingerprint.spec_digest,
            code_digest=self.fingerprint.code_digest,
            override=self.override,
            spec_json=self.fingerprint.spec_json,
            code_files=self.fingerprint.code_files,
        )
        return self.record_id

    def adopt(self, record: StageRecord) -> bool:
        """Take over ``record``, which a killed run left (False: another run took it first)."""
        if not self.ledger.adopt(record):
            return False
        self._started = time.monotonic()
        self.record_id = record.id
        return True

    def failed_to_start(self, error: MajobError) -> None:
        """The stage did not get to run: ``refused`` when the pre-flight (or a job in the way)
        turned it away, else ``failed``; the record is opened first if it was not yet."""
        reason = error.message.splitlines()[0]
        if isinstance(error, PreflightError):  # its message only counts the problems
            reason = f"{reason}: " + "; ".join(error.problems)
        if self.record_id is None:
            self.start()
        refused = isinstance(error, (PreflightError, StageRefused))
        self.stopped("refused" if refused else "failed", reason)

    def job(self, job_id: str) -> None:
        """The stage's cloud job exists: remember it now."""
        if self.record_id is not None:
            self.ledger.set_job(self.record_id, job_id)

    def stopped(self, result: str, reason: str = "") -> None:
        """The stage ended without an outcome: ``failed`` to start, or ``interrupted``."""
        if self.record_id is not None:
            self.ledger.finish(
                self.record_id,
                result=result,
                reason=reason,
                duration=time.monotonic() - self._started,
            )

    def finish(self, outcome: Outcome) -> StageRecord | None:
        """Close the record with the judged ``outcome``; the record as kept."""
        if self.record_id is None:
            return None
        self.ledger.finish(
            self.record_id,
            result="passed" if outcome.passed else "failed",
            reason=outcome.reason,
            duration=outcome.duration,
            metrics=outcome.metrics,
            outputs=outcome.outputs,
            job_id=outcome.job.id if outcome.job is not None else None,
            restarts=[end.to_json() for end in outcome.job.run_ends] if outcome.job else (),
            step_ms=outcome.step_ms,
        )
        return self.ledger.get(self.record_id)

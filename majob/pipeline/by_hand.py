"""Cloud stages run by hand (``majob submit --stage ... [--wait]``): the pipeline's formal gate,
and its ledger.

``majob submit --stage formal`` is refused unless the debug stage passed for this code and spec
(in ``majob pipeline`` or in ``majob submit --stage debug --wait``), or ``--force --reason``
says why; the reason is kept in the ledger. A debug submit is not gated on the local stage:
it is the small joint-debug job, cheap by design, and ``majob run`` keeps no ledger.

A submit that waits records its stage, judged by the pipeline's rule (the job completed, every
output holds objects this job wrote, the ``expect:`` checks hold), so that the formal gate
opens for it and a later ``majob pipeline`` skips what passed.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from majob.errors import StageRefused, UserInputError
from majob.pipeline.digests import Fingerprint
from majob.pipeline.expect import check_expect
from majob.pipeline.gate import gate
from majob.pipeline.ledger import Ledger
from majob.pipeline.metrics import MetricReader, Series
from majob.pipeline.stages import OUTPUT_CLOCK_SLACK, cloud_outputs
from majob.spec.models import JobSpec, Stage

if TYPE_CHECKING:
    from majob.service.base import Job
    from majob.spec.profiles import Profile

__all__ = ["Judgement", "StageByHand", "formal_gate_line", "judge_completed_job", "override_for"]


def formal_gate_line(ledger: Ledger, spec: JobSpec, fingerprint: Fingerprint) -> str:
    """What a dry run says about the formal gate."""
    state = gate(ledger, spec.name, "formal", fingerprint)
    if state.open:
        return "formal gate: open (debug passed for this code and spec)"
    return f"formal gate: closed, a submit would be refused: {state.why}"


def override_for(
    ledger: Ledger,
    spec: JobSpec,
    fingerprint: Fingerprint,
    stage: Stage,
    force_reason: str | None,
    spec_file: str,
) -> str:
    """The gate override to record for submitting ``spec`` as ``stage`` ("" when none is
    needed); ``StageRefused`` when the formal gate is closed and no reason was given."""
    if force_reason is not None and not force_reason.strip():
        raise UserInputError("--force needs --reason '...': the override is kept in the ledger")
    if stage != "formal":
        if force_reason is not None:
            raise UserInputError(
                f"--force overrides the formal gate; a {stage} submit has none to override"
            )
        return ""
    state = gate(ledger, spec.name, stage, fingerprint)
    if state.open:
        return ""
    if force_reason is None:
        raise StageRefused(
            f"formal refused for {spec.name}: {state.why}",
            hint=f"pass the debug stage first (majob submit {spec_file} --stage debug --wait, "
            f"or majob pipeline {spec_file}), or override with --force --reason '...' "
            f"(kept in the ledger: {ledger.path})",
        )
    return force_reason.strip()


@dataclass
class Judgement:
    """How a finished job's stage is recorded: passed, or why not."""

    passed: bool
    reason: str = ""
    outputs: list[str] = field(default_factory=list)  # "<channel>/<path>"


def judge_completed_job(
    spec: JobSpec, stage: Stage, profile: Profile, job: Job, lines: Sequence[str], metrics: Series
) -> Judgement:
    """The pipeline's rule for a job that completed: every output holds objects written since
    the job was created (an earlier run's are no proof), and the ``expect:`` checks hold."""
    since = (job.create_time or 0) / 1000 - OUTPUT_CLOCK_SLACK
    found, missing = cloud_outputs(spec.at_stage(stage), profile, since=since)
    outputs = [f"{channel}/{rel}" for channel, rel, _, _ in found]
    if missing:
        return Judgement(
            False, f"job {job.id} completed but wrote nothing to {', '.join(missing)}", outputs
        )
    failures = check_expect(spec.expect, outputs=outputs, lines=lines, metrics=metrics)
    return Judgement(not failures, "; ".join(failures), outputs)


class StageByHand:
    """The ledger record of one submitted stage: opened when its job exists, closed when the
    wait ends (a Ctrl-C leaves it interrupted, and the next pipeline follows the job)."""

    def __init__(
        self,
        ledger: Ledger,
        spec: JobSpec,
        fingerprint: Fingerprint,
        spec_path: str,
        stage: Stage,
        override: str,
    ) -> None:
        self.ledger = ledger
        self.spec = spec
        self.spec_path = spec_path
        self.stage = stage
        self.override = override
        self.fingerprint = fingerprint
        self.reader = MetricReader(spec.metrics)
        self.lines: list[str] = []
        self.record_id: int | None = None
        self._started = time.monotonic()

    def job_created(self, job: Job) -> int:
        self._started = time.monotonic()
        self.record_id = self.ledger.start(
            spec_name=self.spec.name,
            spec_path=self.spec_path,
            stage=self.stage,
            spec_digest=self.fingerprint.spec_digest,
            code_digest=self.fingerprint.code_digest,
            override=self.override,
            spec_json=self.fingerprint.spec_json,
            code_files=self.fingerprint.code_files,
        )
        self.ledger.set_job(self.record_id, job.id)
        return self.record_id

    def line(self, line: str) -> None:
        self.lines.append(line)
        self.reader.feed(line)

    def finish(self, result: str, reason: str = "", outputs: Sequence[str] = ()) -> None:
        if self.record_id is None:
            return
        self.ledger.finish(
            self.record_id,
            result=result,
            reason=reason,
            duration=time.monotonic() - self._started,
            metrics=self.reader.series,
            outputs=outputs,
        )

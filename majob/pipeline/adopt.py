"""A re-run adopts the job its killed run left, instead of paying for a second one.

A pipeline (or ``majob submit --stage S --wait``) killed while its cloud job runs leaves a
record that reads ``interrupted`` (Ctrl-C and SIGTERM close it so; ``kill -9``, a closed laptop
or a lost SSH session leave it ``running`` with a dead pid, which reads the same). The job
itself goes on. The next run of the same stage, code and spec finds that record here and its
job on the service, and then follows the job if it still runs, or judges it at once if it has
ended, passed or failed: no second job is submitted for one run of the code.

Matching takes two keys. The record's spec and code digests are the ledger's; the job's submit
id (``service/create.py``: the compiled body, the code and the stage, digested) also covers
what the digests leave out on purpose (the stage's own overrides, ``--resume-from``). A job
whose submit id differs "does not match": it ran something else, so a new job is submitted; if
it still runs under the name the new one needs, the run is refused saying exactly that.
A record without a job id (killed between the create and the record's update) finds its job by
that submit id.

The record itself is taken over (``Ledger.adopt``: the same row, now this process's): one job
is one record, so ``majob history`` shows the job once with its verdict, a job's metrics are
found by its id as before, and a re-run killed again leaves the row for the next one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from majob.errors import ServiceError, ServiceNotFound, StageRefused
from majob.pipeline.digests import Fingerprint
from majob.pipeline.gate import changes_since
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord
from majob.pipeline.record import StageRecorder

if TYPE_CHECKING:
    from collections.abc import Callable

    from majob.service.base import Job, TrainingService
    from majob.service.submit import SubmitPlan

# What the digests do not cover and the submit id does.
OPTIONS_CHANGED = "the stage's options (stages.<stage> overrides, --set of them, --resume-from)"


@dataclass(frozen=True)
class Left:
    """The record a killed run left and its job, found on the service."""

    record: StageRecord
    job: Job


def left_record(
    ledger: Ledger, name: str, stage: str, fingerprint: Fingerprint
) -> StageRecord | None:
    """The newest record of ``stage`` for this code and spec whose run died before judging it,
    unless a run of the same code and spec ended since (it had its verdict). Refusals ran
    nothing and are passed over."""
    for record in ledger.records(name, stage=stage):
        if record.result == "refused":
            continue
        if not fingerprint.matches(record.spec_digest, record.code_digest):
            continue
        return record if record.effective_result == "interrupted" else None
    return None


def stale_record(
    ledger: Ledger, name: str, stage: str, fingerprint: Fingerprint
) -> StageRecord | None:
    """The newest interrupted record of ``stage`` with a job, for other code or spec."""
    for record in ledger.records(name, stage=stage):
        if record.result == "refused" or not record.job_id:
            continue
        if fingerprint.matches(record.spec_digest, record.code_digest):
            return None  # a later run of this code and spec: the older job is not in its way
        return record if record.effective_result == "interrupted" else None
    return None


def find_left(
    connect: Callable[[], TrainingService],
    ledger: Ledger,
    plan: SubmitPlan,
    fingerprint: Fingerprint,
    report: Callable[[str], None],
) -> Left | None:
    """The job to adopt for ``plan``, with its record; None to submit anew (said through
    ``report`` when a left record's job cannot be adopted); ``connect`` gives the service's
    client, asked for only when the ledger has such a record. ``StageRefused`` when a job a
    killed run left for other code, spec or options still runs under the name ``plan``
    needs: a new submit would be refused, and the job is not this run's to follow."""
    name, stage = plan.spec.name, plan.stage
    record = left_record(ledger, name, stage, fingerprint)
    if record is None:
        stale = stale_record(ledger, name, stage, fingerprint)
        if stale is not None:
            _refuse_if_in_the_way(connect(), stale, plan, changes_since(stale, fingerprint))
        return None
    service = connect()
    job = _job_of(service, record, plan, report)
    if job is None:
        return None
    if job.submit_id is not None and job.submit_id != plan.submit_id:
        if not job.finished:
            _refuse_if_in_the_way(service, record, plan, [OPTIONS_CHANGED], job)
        report(
            f"[majob] job {job.id} ({job.name}) left by record #{record.id} ran other stage "
            "options, so it does not match; submitting anew"
        )
        return None
    return Left(record, job)


def adopt(
    recorder: StageRecorder,
    connect: Callable[[], TrainingService],
    plan: SubmitPlan,
    report: Callable[[str], None],
) -> Job | None:
    """The job a killed run left for ``plan`` (``find_left``), its record now ``recorder``'s;
    None when there is none to adopt, or another run took it over first."""
    left = find_left(connect, recorder.ledger, plan, recorder.fingerprint, report)
    if left is None or not recorder.adopt(left.record):
        return None
    return left.job


def _job_of(
    service: TrainingService, record: StageRecord, plan: SubmitPlan, report: Callable[[str], None]
) -> Job | None:
    """The record's job: by its id, or (a record killed before it learnt the id) by the
    submit id of ``plan``, created after the record was opened."""
    if record.job_id:
        try:
            return service.get(record.job_id)
        except ServiceNotFound:
            report(
                f"[majob] job {record.job_id} left by record #{record.id} no longer exists; "
                "submitting anew"
            )
            return None
    from majob.service.jobnames import jobs_named_like, search_stem

    try:
        jobs = list(jobs_named_like(service, search_stem(plan.job_name)))
    except ServiceError:
        return None  # the submit's own search and pre-flight say what is wrong
    ours = [job for job in jobs if job.submit_id == plan.submit_id]
    return max(ours, key=lambda job: job.create_time or 0) if ours else None


def _refuse_if_in_the_way(
    service: TrainingService,
    record: StageRecord,
    plan: SubmitPlan,
    changes: list[str],
    job: Job | None = None,
) -> None:
    """Refuse the stage when ``record``'s job still runs under ``plan``'s job name."""
    if job is None:
        try:
            job = service.get(record.job_id)
        except ServiceError:
            return  # gone, or the service cannot say: the pre-flight asks again
    if job.finished or job.name != plan.job_name:
        return  # an ended holder's name is numbered over (service/jobnames.py)
    changed = "; ".join(changes) or "the digests differ"
    raise StageRefused(
        f"{plan.stage} refused for {plan.spec.name}: job {job.id} ({job.name}), which the "
        f"interrupted run of ledger record #{record.id} submitted, is still {job.phase} and "
        f"does not match this run (changed since: {changed}), so it is not followed, and a new "
        "job cannot take its name while it runs",
        hint=f"stop it (majob stop {job.id}) and run again to submit this code and spec (the "
        "new job is numbered), or restore what changed and run again to follow it",
    )

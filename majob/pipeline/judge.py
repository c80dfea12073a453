"""How a stage is judged: the one rule, for the pipeline and for ``majob submit --wait``.

A cloud stage passes when its job completed, every output channel holds objects this job wrote
in OBS, and the ``expect:`` checks hold; a local stage when its run passed and the checks hold.
``judge_job`` reads the first two off a finished job, ``judge_expect`` adds the checks to any
stage's ``Outcome``.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING

from majob.pipeline.expect import check_expect
from majob.pipeline.metrics import Series
from majob.spec.expect import Expect
from majob.spec.models import JobSpec, Stage

if TYPE_CHECKING:
    from majob.runner.result import RunResult
    from majob.service.base import Job
    from majob.service.watch import WaitResult
    from majob.spec.profiles import Profile

OUTPUT_CLOCK_SLACK = 2.0  # seconds; OBS stamps whole seconds
FAILURE_TAIL = 3  # last log lines of the failed task quoted in the reason


@dataclass(frozen=True)
class StoredOutput:
    """One file a cloud job wrote to an output channel."""

    channel: str
    path: str  # below the channel's OBS directory
    uri: str
    size: int

    @property
    def name(self) -> str:
        """``<channel>/<path>``, as the ledger and ``expect.outputs`` name it."""
        return f"{self.channel}/{self.path}"


@dataclass
class Outcome:
    """How a stage's run ended: ``passed`` and why not, with what it produced."""

    passed: bool
    reason: str = ""
    duration: float = 0.0
    lines: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # "<channel>/<path>"
    metrics: Series = field(default_factory=dict)
    job: Job | None = None
    run: RunResult | None = None
    stored: tuple[StoredOutput, ...] = ()  # a cloud job's output files, as found in OBS
    step_ms: tuple[float, float] | None = None  # the step time's p50 and p95 (step files)


def judge_job(spec: JobSpec, stage: Stage, profile: Profile, waited: WaitResult[Job]) -> Outcome:
    """A finished job's outcome before the ``expect:`` checks: it completed, and every output
    holds objects written since the job was created (an earlier run's are no proof)."""
    job = waited.job
    if not job.succeeded:
        failed = job.failed_task()
        reason = f"job {job.id} ended {job.phase}"
        if failed is not None:
            reason += f": {failed.task} exited with code {failed.exit_code}"
            tail = waited.tail_of(failed.task)[-FAILURE_TAIL:]
            if tail:
                reason += "; last lines: " + " | ".join(tail)
        return Outcome(False, reason, job=job)
    since = (job.create_time or 0) / 1000 - OUTPUT_CLOCK_SLACK
    stored, missing = cloud_outputs(spec.at_stage(stage), profile, since=since)
    outputs = [file.name for file in stored]
    if missing:
        reason = f"job {job.id} completed but wrote nothing to {', '.join(missing)}"
        return Outcome(False, reason, outputs=outputs, job=job, stored=tuple(stored))
    from majob.pipeline.cloudsteps import cloud_step_ms

    step_ms = cloud_step_ms(stored, profile)  # --perf: the nodes' step files in the output
    return Outcome(True, outputs=outputs, job=job, stored=tuple(stored), step_ms=step_ms)


def judge_expect(expect: Expect, outcome: Outcome) -> Outcome:
    """``outcome`` with the ``expect:`` checks applied (a stage that failed already stays as
    it is: its reason is the first failure)."""
    if not outcome.passed:
        return outcome
    failures = check_expect(
        expect, outputs=outcome.outputs, lines=outcome.lines, metrics=outcome.metrics
    )
    return replace(outcome, passed=not failures, reason="; ".join(failures))


def cloud_outputs(
    spec: JobSpec, profile: Profile, *, since: float = 0.0
) -> tuple[list[StoredOutput], list[str]]:
    """The files in each output's OBS directory written since ``since`` (epoch seconds), and
    the outputs that hold none."""
    from majob.service.connect import open_store
    from majob.storage.listing import iter_folder

    store = open_store(profile)
    files: list[StoredOutput] = []
    missing: list[str] = []
    try:
        for channel in spec.outputs:
            location = channel.obs.as_dir()
            found = [
                StoredOutput(
                    channel.name,
                    info.key[len(location.key) :],
                    f"obs://{location.bucket}/{info.key}",
                    info.size,
                )
                for info in iter_folder(store, location)
                if not info.key.endswith("/")
                and (not info.last_modified or info.last_modified >= since)
            ]
            if not found:
                missing.append(location.uri)
            files += found
    finally:
        store.close()
    return files, missing

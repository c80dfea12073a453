"""Running one stage: local on this machine (the runner), debug and formal on ModelArts (the
service submits, then the job is followed), each reporting its log lines live and ending in an
``Outcome`` judged by ``pipeline/judge.py`` (the caller applies the ``expect:`` checks).
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import replace
from typing import TYPE_CHECKING

from majob.container import EMULATOR_NOTE
from majob.errors import MajobError
from majob.pipeline.judge import Outcome, judge_job
from majob.pipeline.live import LiveLine
from majob.pipeline.metrics import MetricReader, Series
from majob.spec.models import JobSpec
from majob.text import counted, printable

if TYPE_CHECKING:
    from majob.runner.result import RunResult
    from majob.service.base import Job
    from majob.service.submit import SubmitPlan
    from majob.spec.profiles import Profile

Report = Callable[[str], None]
#: Shows a followed job's status line while the block runs (``majob.cli.follow.live_status``).
Live = Callable[[LiveLine], AbstractContextManager[object]]


class StageLog:
    """Every log line of a stage: shown live (through ``report``), kept, and read for metrics."""

    def __init__(self, spec: JobSpec, report: Report) -> None:
        self.lines: list[str] = []
        self.reader = MetricReader(spec.metrics)
        self.report = report

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        self.reader.feed(line)
        self.report(line)

    def ended(self, outcome: Outcome, started: float) -> Outcome:
        """``outcome`` with this log's lines and metrics, timed from ``started`` (monotonic)."""
        return replace(
            outcome,
            duration=time.monotonic() - started,
            lines=self.lines,
            metrics=self.reader.series,
        )


def emulator_notes(lines: Sequence[str]) -> tuple[str, ...]:
    """The emulator's notes in a job's log (which engine it stood in for, what it did not
    check), each once: every task's log holds them."""
    notes: dict[str, None] = {}
    for line in lines:
        at = line.find(EMULATOR_NOTE)
        if at >= 0:
            notes[line[at + len(EMULATOR_NOTE) :].strip()] = None
    return tuple(notes)


def run_local_stage(spec: JobSpec, report: Report, perf: bool = False) -> Outcome:
    """The local stage; every run records its step times, ``perf`` profiles it too."""
    from majob.perf.setup import PROFILING_DIR, for_local_run
    from majob.runner.local import run_local

    log = StageLog(spec, report)
    started = time.monotonic()
    try:
        run = run_local(
            spec,
            "local",
            on_line=log,
            prepare_env=for_local_run(perf),
            run_dir_only=(PROFILING_DIR,) if perf else (),
        )
    except MajobError as error:
        return log.ended(Outcome(False, error.message.splitlines()[0]), started)
    _report_kept(run, report)
    outputs = [f"{f.channel}/{f.path}" for f in run.outputs]
    failures = _rehearse_resume(spec, run, log.reader.series, report) if spec.expect.resumes else []
    outcome = Outcome(
        not failures, "; ".join(failures), outputs=outputs, run=run, step_ms=_step_ms(run, perf)
    )
    return replace(log.ended(outcome, started), duration=run.duration)


def _step_ms(run: RunResult, perf: bool) -> tuple[float, float] | None:
    """The run's step time (p50, p95 in ms) from its nodes' step files."""
    from majob.perf.setup import profiling_dir
    from majob.perf.steps import step_times
    from majob.runner.guard import RUN_STEPS_DIR

    profile = profiling_dir(run.output_dirs) if perf else None
    times = step_times([run.run_dir / RUN_STEPS_DIR, *([profile] if profile else [])])
    return (times.p50, times.p95) if times is not None else None


# Where the rehearsal of `expect: resumes: true` kills the run: half-way through its progress.
RESUME_FAIL_AT = "50%"


def _rehearse_resume(spec: JobSpec, run: RunResult, series: Series, report: Report) -> list[str]:
    """``expect.resumes``: kill a copy of the passed run half-way, restart it with only the
    checkpoint output kept; the run that just passed (``series``: its metrics, read as it ran)
    is the uninterrupted reference."""
    from majob.pipeline.expect import resume_failures
    from majob.pipeline.rehearsal import Attempt, RehearsalOptions, rehearse

    report(f"[majob] expect.resumes: rehearsing a failure at {RESUME_FAIL_AT} of the run")
    options = RehearsalOptions(runs_dir=run.run_dir.parent, on_line=report)
    reference = Attempt("uninterrupted", run.run_id, run.status, run.duration, series)
    try:
        found = rehearse(spec, RESUME_FAIL_AT, compare_to=reference, options=options)
    except MajobError as error:
        return [f"expect.resumes: {error.message.splitlines()[0]}"]
    report(
        f"[majob] expect.resumes: restarted at {found.verdict.began} ({found.verdict.how}); "
        f"{found.time_lost:.1f}s lost to the failure"
    )
    return resume_failures(found)


def _report_kept(run: RunResult, report: Report) -> None:
    for copy in run.copies:
        if copy.kept:
            report(
                f"[majob] {copy.channel}: {counted(len(copy.kept), 'file')} in {copy.target} "
                "differ from "
                f"this run's and were kept; this run's are in {run.output_dir(copy.channel)}"
            )


def run_cloud_stage(
    spec: JobSpec,
    plan: SubmitPlan,
    profile: Profile,
    report: Report,
    *,
    upload_inputs: bool = False,
    left: Job | None = None,
    on_job: Callable[[Job], None] | None = None,
    live: Live | None = None,
) -> Outcome:
    """Submit ``plan`` (``spec``'s stage and code, ``plan_submit``), or follow the job ``left``
    that a killed run of the same stage, code and spec left (``pipeline/adopt.py``: running, it
    is followed live; ended, its log is read and it is judged at once), and wait for it to end.
    The job stays bound to its open client, so that ``outcome.job.logs()`` and ``.refresh()``
    work afterwards; ``on_job`` receives it. ``live`` shows the job's status line (phase, a
    clock that ticks, the last metric values) while it is followed: the CLI draws it under the
    log lines."""
    stage = plan.stage
    log = StageLog(spec, report)
    started = time.monotonic()
    job = _the_job(plan, profile, report, upload_inputs, left)
    if on_job is not None:
        on_job(job)  # the caller owns the job's client from here (and closes it when done)
    # ModelArts' auto_stop counts whole hours; the stage's own timeout is kept here, exactly
    # (an adopted job has had part of it already).
    limit = _time_left(spec.timeout(stage), left)
    line = LiveLine(job, log.reader)
    masker = spec.from_environ.masker()
    with live(line) if live is not None else contextlib.nullcontext():
        waited = job.wait(
            timeout=limit,
            on_update=lambda current: report(f"[majob] phase: {current.phase}"),
            on_line=log,
            on_poll=line.seen,
            on_event=lambda event: report(
                f"[majob] event {event.level}: {masker.text(event.message)}"
            ),
            masker=masker,
        )
    if waited.timed_out:
        stopped = waited.job.stop()
        reason = (
            f"the {stage} stage passed its timeout of {limit}s; job {waited.job.id} was "
            f"stopped ({stopped.phase})"
        )
        return log.ended(Outcome(False, reason, job=waited.job), started)
    outcome = judge_job(spec, stage, profile, waited)
    for file in outcome.stored:
        report(f"[majob] {file.channel} in OBS: {printable(file.uri)} ({file.size} bytes)")
    ended = log.ended(outcome, started)
    ran = waited.job.duration_ms / 1000
    # An adopted job ran before this run saw it: its own run time is the stage's.
    return replace(ended, duration=ran) if left is not None and ran > 0 else ended


def _time_left(limit: int | None, left: Job | None) -> int | None:
    """What is left of the stage's ``limit`` (seconds) for the job ``left`` running."""
    if limit is None or left is None or left.finished:
        return limit
    return max(0, limit - int(left.duration_ms / 1000))


def _the_job(
    plan: SubmitPlan, profile: Profile, report: Report, upload_inputs: bool, left: Job | None
) -> Job:
    """``left``, said so (followed, or judged if it ended), or ``plan``'s job, submitted now."""
    from majob.service.submit import submit_plan

    if left is None:
        job = submit_plan(
            plan,
            profile,
            upload_inputs=upload_inputs,
            report=lambda line: report(f"[majob] {line}"),
        )
        report(f"[majob] job {job.id} ({job.name}) submitted")
    elif left.finished:
        report(
            f"[majob] judging job {left.id} ({left.name}), left by the last run: it ended "
            f"{left.phase} meanwhile"
        )
    else:
        report(f"[majob] following job {left.id} ({left.name}), left running by the last run")
    return job if left is None else left

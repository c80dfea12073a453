"""Running one stage: local on this machine (the runner), debug and formal on ModelArts (submit,
then wait), each reporting its log lines live and ending in an ``Outcome``.

A cloud stage passes when its job completed, every output channel holds objects in OBS, and
the ``expect:`` checks hold (the caller applies those).
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from majob.errors import MajobError
from majob.pipeline.metrics import MetricReader, Series
from majob.spec.models import JobSpec, Stage
from majob.text import counted, printable

if TYPE_CHECKING:
    from majob.runner.result import RunResult
    from majob.service.base import Job
    from majob.spec.profiles import Profile

Report = Callable[[str], None]
OUTPUT_CLOCK_SLACK = 2.0  # seconds; OBS stamps whole seconds


@dataclass
class Outcome:
    """How a stage's job ended, before the ``expect`` checks."""

    passed: bool
    reason: str = ""
    duration: float = 0.0
    lines: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)  # "<channel>/<path>"
    metrics: Series = field(default_factory=dict)
    job: Job | None = None
    run: RunResult | None = None


class _Collector:
    """Every log line: shown live, kept, and read for metrics."""

    def __init__(self, spec: JobSpec, report: Report) -> None:
        self.lines: list[str] = []
        self.reader = MetricReader(spec.metrics)
        self.report = report

    def __call__(self, line: str) -> None:
        self.lines.append(line)
        self.reader.feed(line)
        self.report(line)


def run_local_stage(spec: JobSpec, report: Report) -> Outcome:
    from majob.runner.local import run_local

    collect = _Collector(spec, report)
    started = time.monotonic()
    try:
        run = run_local(spec, "local", on_line=collect)
    except MajobError as error:
        return Outcome(
            False,
            error.message.splitlines()[0],
            time.monotonic() - started,
            collect.lines,
            metrics=collect.reader.series,
        )
    for copy in run.copies:
        if copy.kept:
            report(
                f"[majob] {copy.channel}: {counted(len(copy.kept), 'file')} in {copy.target} "
                "differ from "
                f"this run's and were kept; this run's are in {run.output_dir(copy.channel)}"
            )
    return Outcome(
        True,
        "",
        run.duration,
        collect.lines,
        [f"{f.channel}/{f.path}" for f in run.outputs],
        collect.reader.series,
        run=run,
    )


def run_cloud_stage(
    spec: JobSpec,
    stage: Stage,
    profile: Profile,
    report: Report,
    *,
    upload_inputs: bool = False,
    resume_job: str | None = None,
    on_job: Callable[[Job], None] | None = None,
) -> Outcome:
    """Submit ``spec`` as ``stage`` (or follow the job ``resume_job`` a killed pipeline left
    running) and wait for it to end. The job stays bound to its open client, so that
    ``outcome.job.logs()`` and ``.refresh()`` work afterwards; ``on_job`` receives it."""
    from majob.service.api import submit
    from majob.service.connect import open_service

    collect = _Collector(spec, report)
    started = time.monotonic()
    job: Job | None = None
    if resume_job:
        service = open_service(profile)
        job = service.get(resume_job)
        if job.finished and not job.succeeded:
            report(
                f"[majob] job {job.id} left by the last pipeline ended {job.phase}; submitting anew"
            )
            service.close()
            job = None
        else:
            report(
                f"[majob] following job {job.id} ({job.name}), left running by the last pipeline"
            )
    if job is None:
        job = submit(
            spec,
            stage,
            profile=profile,
            upload_inputs=upload_inputs,
            report=lambda line: report(f"[majob] {line}"),
        )
        report(f"[majob] job {job.id} ({job.name}) submitted")
    if on_job is not None:
        on_job(job)  # the caller owns the job's client from here (and closes it when done)
    # ModelArts' auto_stop counts whole hours; the stage's own timeout is kept here, exactly.
    limit = spec.timeout(stage)
    waited = job.wait(
        timeout=limit,
        on_update=lambda current: report(f"[majob] phase: {current.phase}"),
        on_line=collect,
        masker=spec.from_environ.masker(),
    )
    final = waited.job
    duration = time.monotonic() - started
    if waited.timed_out:
        stopped = final.stop()
        return Outcome(
            False,
            f"the {stage} stage passed its timeout of {limit}s; job {final.id} was stopped "
            f"({stopped.phase})",
            duration,
            collect.lines,
            metrics=collect.reader.series,
            job=final,
        )
    if not final.succeeded:
        failed = final.failed_task()
        reason = f"job {final.id} ended {final.phase}"
        if failed is not None:
            reason += f": {failed.task} exited with code {failed.exit_code}"
            tail = waited.tail_of(failed.task)[-3:]
            if tail:
                reason += "; last lines: " + " | ".join(tail)
        return Outcome(
            False, reason, duration, collect.lines, metrics=collect.reader.series, job=final
        )
    # Only objects written since the job was created count: an earlier run's are no proof.
    since = (final.create_time or 0) / 1000 - OUTPUT_CLOCK_SLACK
    found, missing = cloud_outputs(spec.at_stage(stage), profile, since=since)
    for channel, _, uri, size in found:
        report(f"[majob] {channel} in OBS: {printable(uri)} ({size} bytes)")  # a job's key
    outputs = [f"{channel}/{rel}" for channel, rel, _, _ in found]
    if missing:
        return Outcome(
            False,
            f"job {final.id} completed but wrote nothing to {', '.join(missing)}",
            duration,
            collect.lines,
            outputs,
            collect.reader.series,
            job=final,
        )
    return Outcome(True, "", duration, collect.lines, outputs, collect.reader.series, job=final)


def cloud_outputs(
    spec: JobSpec, profile: Profile, *, since: float = 0.0
) -> tuple[list[tuple[str, str, str, int]], list[str]]:
    """The files in each output's OBS directory written since ``since`` (epoch seconds), as
    (channel, path in the channel, obs uri, size), and the outputs that hold none."""
    from majob.service.connect import open_store

    store = open_store(profile)
    files: list[tuple[str, str, str, int]] = []
    missing: list[str] = []
    try:
        for channel in spec.outputs:
            location = channel.obs.as_dir()
            found = [
                (
                    channel.name,
                    info.key[len(location.key) :],
                    f"obs://{location.bucket}/{info.key}",
                    info.size,
                )
                for info in store.list_all(location.bucket, location.key)
                if not info.key.endswith("/")
                and (not info.last_modified or info.last_modified >= since)
            ]
            if not found:
                missing.append(location.uri)
            files += found
    finally:
        store.close()
    return files, missing

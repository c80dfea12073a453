"""Following a job to its end on the terminal: a live status line, its log, how it ended.

``majob submit --wait`` follows the job it made; Ctrl-C or a service that stays away ends the
wait, never the job, and says how to follow it later.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

import typer

from majob.cli.jobtext import console, phase_text, took

if TYPE_CHECKING:
    from majob.masking import Masker
    from majob.service.base import Job, TrainingService
    from majob.service.watch import WaitResult


def follow_job(
    source: Callable[[], TrainingService],
    job: Job,
    *,
    reconnect: Callable[[], None] | None = None,
    also_line: Callable[[str], None] | None = None,
    masker: Masker | None = None,
    profile: str | None = None,
) -> tuple[int, WaitResult[Job] | None]:
    """Follow ``job`` to its end with a live status line and its log (each line masked with
    ``masker``, and also given to ``also_line``); the exit code and how the wait ended (None:
    interrupted, or the service stayed away). ``profile`` is named in how to follow it later."""
    from majob.errors import ServiceUnreachable
    from majob.service.watch import wait_for

    shown = console()
    status = shown.status(f"{job.name} ({job.id}): {phase_text(job)}")

    def on_update(current: Job) -> None:
        status.update(
            f"{current.name} ({current.id}): {phase_text(current)}, {took(current.duration_ms)}"
        )
        shown.print(f"phase: {phase_text(current)}", markup=False)

    def on_line(line: str) -> None:
        shown.print(line, markup=False)
        if also_line is not None:
            also_line(line)

    status.start()
    try:
        result = wait_for(
            source,
            job.id,
            job_name=job.name,
            on_update=on_update,
            on_line=on_line,
            on_connection=lambda text: shown.print(f"majob: {text}", markup=False),
            reconnect=reconnect,
            masker=masker,
        )
    except KeyboardInterrupt:
        status.stop()
        _say_still_running(job)
        return 130, None
    except ServiceUnreachable as error:
        status.stop()
        _say_unreachable(job, error.message, profile)
        return 1, None
    finally:
        status.stop()
    return report_end(result), result


def _say_still_running(job: Job) -> None:
    sys.stderr.write(
        f"interrupted: job {job.id} ({job.name}) keeps running on ModelArts\n"
        f"  follow it: majob logs {job.id} --follow\n"
        f"  stop it:   majob stop {job.id}\n"
    )


def _say_unreachable(job: Job, message: str, profile: str | None) -> None:
    flag = f" --profile {profile}" if profile else ""
    sys.stderr.write(
        f"error: {message}\n"
        f"  it may still be running; when the service is back:\n"
        f"  status:    majob status {job.id}{flag}\n"
        f"  follow it: majob logs {job.id} --follow{flag}\n"
    )


def report_end(result: WaitResult[Job]) -> int:
    """Say how the followed job ended (which task failed, its last lines); the exit code."""
    job = result.job
    if job.succeeded:
        typer.echo(f"job {job.id} ({job.name}) Completed in {took(job.duration_ms)}")
        return 0
    lines = [f"error: job {job.id} ({job.name}) ended {phase_text(job)}"]
    failed = job.failed_task()
    if failed is not None:
        message = f": {failed.message}" if failed.message else ""
        lines.append(f"error: task {failed.task} exited with code {failed.exit_code}{message}")
        tail = result.tail_of(failed.task)
        if tail:
            lines.append(f"last lines of {failed.task}:")
            lines += [f"  {line}" for line in tail]
    elif job.phase == "Abnormal":
        lines.append("error: the job was lost (a node or the service failed while it ran)")
    lines.append(f"hint: majob logs {job.id} shows the whole log")
    sys.stderr.write("\n".join(lines) + "\n")
    return 1

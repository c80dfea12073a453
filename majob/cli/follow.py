"""Following a job to its end on the terminal: a live status line, its log, how it ended.

``majob submit --wait`` follows the job it made; Ctrl-C or a service that stays away ends the
wait, never the job, and says how to follow it later.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING

import typer

from majob.cli.jobtext import console, fault_history, phase_text, took

if TYPE_CHECKING:
    from rich.console import Console

    from majob.masking import Masker
    from majob.pipeline.live import LiveLine
    from majob.pipeline.metrics import MetricReader
    from majob.service.base import Job, TrainingService
    from majob.service.logs import Event
    from majob.service.watch import WaitResult


def follow_job(
    source: Callable[[], TrainingService],
    job: Job,
    *,
    reconnect: Callable[[], None] | None = None,
    also_line: Callable[[str], None] | None = None,
    masker: Masker | None = None,
    profile: str | None = None,
    metrics: MetricReader | None = None,
) -> tuple[int, WaitResult[Job] | None]:
    """Follow ``job`` to its end with a live status line and its log (each line masked with
    ``masker``, and also given to ``also_line``); the exit code and how the wait ended (None:
    interrupted, or the service stayed away). ``profile`` is named in how to follow it later;
    the status line shows the last value of each metric ``metrics`` (fed by ``also_line``)
    has read."""
    from majob.errors import ServiceUnreachable
    from majob.pipeline.live import LiveLine
    from majob.service.watch import wait_for

    shown = console()
    line = LiveLine(job, metrics)
    said = _Said(shown, line, len(job.restarts), masker, also_line)
    try:  # the status line is gone before anything is said on stderr
        with live_status(line, shown):
            result = wait_for(
                source,
                job.id,
                job_name=job.name,
                on_update=said.update,
                on_line=said.line,
                on_poll=said.poll,
                on_event=said.event,
                on_connection=lambda text: shown.print(f"majob: {text}", markup=False),
                reconnect=reconnect,
                masker=masker,
            )
    except KeyboardInterrupt:
        _say_still_running(job)
        return 130, None
    except ServiceUnreachable as error:
        _say_unreachable(job, error.message, profile)
        return 1, None
    return report_end(result), result


class _Said:
    """What following a job prints as it goes: phase changes, each restart and each warning
    event once, and the log lines (also handed to ``also_line``)."""

    def __init__(
        self,
        shown: Console,
        status: LiveLine,
        restarts_shown: int,
        masker: Masker | None,
        also_line: Callable[[str], None] | None,
    ) -> None:
        self.shown, self.status, self.restarts_shown = shown, status, restarts_shown
        self.masked = masker.text if masker is not None else str
        self.also_line = also_line

    def update(self, current: Job) -> None:
        self.shown.print(f"phase: {phase_text(current)}", markup=False)

    def poll(self, current: Job) -> None:
        # Each restart ModelArts makes is said once, as the poll that first sees it.
        self.status.seen(current)
        new = current.restarts[self.restarts_shown :]
        for number, end in enumerate(new, self.restarts_shown + 1):
            self.shown.print(f"restart {number}: {end.text()}", markup=False)
        self.restarts_shown = max(self.restarts_shown, len(current.restarts))

    def event(self, event: Event) -> None:
        self.shown.print(f"event {event.level}: {self.masked(event.message)}", markup=False)

    def line(self, text: str) -> None:
        self.shown.print(text, markup=False)
        if self.also_line is not None:
            self.also_line(text)


@contextmanager
def live_status(line: LiveLine, shown: Console | None = None) -> Iterator[None]:
    """Show ``line`` at the bottom of the terminal while the block runs, redrawn several
    times a second (so its clock ticks between polls); what is printed meanwhile goes above
    it. Nothing is drawn when the output is not a terminal."""
    from rich.text import Text

    class Drawn:
        def __rich__(self) -> Text:
            return Text(line.text(), no_wrap=True, overflow="ellipsis")

    status = (shown or console()).status(Drawn())
    status.start()
    try:
        yield
    finally:
        status.stop()


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
    lines += [f"error: {text}" for text in fault_history(job)]
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

"""A job's log lines, per task or all tasks merged with ``[worker-i]`` prefixes.

ModelArts keeps one log per task. ``LogCursor`` remembers, per task, the last line read
(``base_line``) and asks each task for what came after, so following a job costs one small
request per task and poll. A task whose log is not ready yet (``ModelArts.2776``, or a 404 for
a task that has not started) simply has no lines this time.

Following a job asks little of it and of its service: the two protocols below say what.
``majob.service.base`` (``Job``, ``TrainingService``) meets them and builds ``job.logs()`` and
``job.wait()`` on this module and ``watch.py``, which therefore import nothing from it.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Protocol, TypeVar

from majob.errors import ServiceError, ServiceNotFound

LOG_NOT_READY = "ModelArts.2776"
PAGE = 500  # the most lines one request returns


@dataclass(frozen=True)
class LogChunk:
    """Lines of one task's log after ``base_line`` (``end_line`` is the next base line)."""

    task: str
    lines: tuple[str, ...]
    end_line: int


@dataclass(frozen=True)
class Event:
    """One line of a job's event list."""

    time: str
    level: str
    message: str
    source: str = ""


class JobState(Protocol):
    """What following a job reads of it (``majob.service.base.Job`` is one)."""

    @property
    def id(self) -> str: ...

    @property
    def name(self) -> str: ...

    @property
    def phase(self) -> str: ...

    @property
    def secondary_phase(self) -> str: ...

    @property
    def tasks(self) -> tuple[str, ...]: ...

    @property
    def finished(self) -> bool: ...

    def task_names(self) -> tuple[str, ...]: ...


J = TypeVar("J", bound=JobState)
J_co = TypeVar("J_co", bound=JobState, covariant=True)


class JobSource(Protocol[J_co]):
    """What following a job asks of its service (``majob.service.base.TrainingService``)."""

    def get(self, job_id: str) -> J_co: ...

    def log_lines(
        self, job_id: str, task: str, base_line: int = 0, lines: int = 500
    ) -> LogChunk: ...

    def events(
        self, job_id: str, *, limit: int = 100, newest: bool = False, level: str | None = None
    ) -> list[Event]: ...


class LogCursor:
    """Where reading stopped in each task's log."""

    def __init__(self, job_id: str, *, task: str | None = None, prefix: bool = True) -> None:
        self.job_id = job_id
        self.task = task
        self.prefix = prefix and task is None
        self.base_lines: dict[str, int] = {}

    def poll(self, service: JobSource[JobState], job: JobState) -> list[str]:
        """Every line written since the last poll, task by task."""
        tasks = (self.task,) if self.task else job.task_names()
        out: list[str] = []
        for task in tasks:
            while True:
                base = self.base_lines.get(task, 0)
                try:
                    chunk = service.log_lines(self.job_id, task, base, PAGE)
                except ServiceError as error:
                    if error.code == LOG_NOT_READY or isinstance(error, ServiceNotFound):
                        break
                    raise
                if not chunk.lines or chunk.end_line <= base:
                    break
                self.base_lines[task] = chunk.end_line
                mark = f"[{task}] " if self.prefix else ""
                out.extend(mark + line for line in chunk.lines)
                if len(chunk.lines) < PAGE:
                    break
        return out


def iter_logs(
    service: JobSource[JobState],
    job_id: str,
    *,
    task: str | None = None,
    follow: bool = False,
    poll: float = 0.25,
) -> Iterator[str]:
    """The job's log lines; with ``follow``, keep reading until the job has ended and its
    logs are read to the end."""
    cursor = LogCursor(job_id, task=task)
    job = service.get(job_id)
    if task is not None and job.tasks and task not in job.tasks:
        raise ServiceNotFound(
            f"job {job.name} ({job_id}) has no task {task!r}",
            hint=f"its tasks: {', '.join(job.tasks)}",
        )
    while True:
        yield from cursor.poll(service, job)
        if not follow or job.finished:
            return
        time.sleep(poll)
        job = service.get(job_id)
        if job.finished:
            # One last read: lines written between the previous poll and the end.
            yield from cursor.poll(service, job)
            return

"""Wait for a job to end, showing its phase changes and its log lines as they come.

A connection that drops while waiting (the service restarting, a network blip) does not end
the wait: the poll is retried with back-off, through a freshly opened client, for up to
``patience`` seconds; then the job is read again and its phase reported (an emulated job that
was running when its emulator died comes back ``Abnormal``, as on ModelArts after a node loss).
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from majob.errors import ServiceUnreachable
from majob.service.base import Job, TrainingService
from majob.service.logs import LogCursor

TAIL = 20  # lines of each task kept for the failure report


@dataclass
class WaitResult:
    """How the wait ended: the job's last state, and the last lines of each task's log."""

    job: Job
    tails: dict[str, deque[str]] = field(default_factory=dict)
    timed_out: bool = False

    def tail_of(self, task: str) -> list[str]:
        return list(self.tails.get(task, ()))


def wait_for(
    get_service: Callable[[], TrainingService],
    job_id: str,
    *,
    timeout: float | None = None,
    on_update: Callable[[Job], None] | None = None,
    on_line: Callable[[str], None] | None = None,
    on_connection: Callable[[str], None] | None = None,
    reconnect: Callable[[], None] | None = None,
    poll: float = 0.25,
    patience: float = 300.0,
) -> WaitResult:
    """Poll job ``job_id`` until it reaches a terminal phase (or ``timeout`` seconds pass)."""
    cursor = LogCursor(job_id, prefix=True)
    tails: dict[str, deque[str]] = {}
    started = time.monotonic()
    lost_since: float | None = None
    delay = poll
    previous: tuple[str, str] | None = None
    while True:
        try:
            service = get_service()
            job = service.get(job_id)
            lines = cursor.poll(service, job)
            if job.finished:
                lines += cursor.poll(service, job)  # what was written just before the end
        except ServiceUnreachable as error:
            now = time.monotonic()
            if lost_since is None:
                lost_since = now
                if on_connection is not None:
                    on_connection(f"connection lost ({error.message}); retrying")
            elif now - lost_since > patience:
                raise
            if reconnect is not None:
                reconnect()
            delay = min(delay * 2, 2.0)
            time.sleep(delay)
            continue
        if lost_since is not None:
            lost_since, delay = None, poll
            if on_connection is not None:
                on_connection("connection back")
        for line in lines:
            task, _, text = line.partition("] ")
            tails.setdefault(task.lstrip("["), deque(maxlen=TAIL)).append(text)
            if on_line is not None:
                on_line(line)
        state = (job.phase, job.secondary_phase)
        if state != previous:
            previous = state
            if on_update is not None:
                on_update(job)
        if job.finished:
            return WaitResult(job, tails)
        if timeout is not None and time.monotonic() - started > timeout:
            return WaitResult(job, tails, timed_out=True)
        time.sleep(poll)

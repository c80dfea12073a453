"""Wait for a job to end, showing its phase changes and its log lines as they come.

A connection that drops while waiting (the service restarting, a network blip) does not end
the wait: the poll is retried with back-off, through a freshly opened client, for up to
``patience`` seconds (``MAJOB_WAIT_PATIENCE``, 300 by default); then the job is read again and
its phase reported (an emulated job that was running when its emulator died comes back
``Abnormal``, as on ModelArts after a node loss). A service that stays away longer ends the wait
with a ``ServiceUnreachable`` that names the job: it may well still be running.

Each log line passes through the ``masker`` (the values the spec took from the environment)
before it is shown or kept: a script that prints its token prints ``***`` here, as locally.
"""

from __future__ import annotations

import os
import time
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Generic

from majob.errors import ConfigError, MajobError, ServiceUnreachable
from majob.masking import Masker
from majob.service.logs import Event, J, JobSource, LogCursor

TAIL = 20  # lines of each task kept for the failure report
EVENT_PERIOD = 5.0  # seconds between asks for new warning events (one request each)
PATIENCE_VARIABLE = "MAJOB_WAIT_PATIENCE"
DEFAULT_PATIENCE = 300.0  # seconds a wait rides out a lost connection


def wait_patience(environ: Mapping[str, str] | None = None) -> float:
    """``MAJOB_WAIT_PATIENCE`` seconds, else five minutes."""
    text = (os.environ if environ is None else environ).get(PATIENCE_VARIABLE, "")
    if not text:
        return DEFAULT_PATIENCE
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not value >= 0:  # also refuses nan
        raise ConfigError(f"{PATIENCE_VARIABLE}={text!r} is not a number of seconds (>= 0)")
    return value


@dataclass
class WaitResult(Generic[J]):
    """How the wait ended: the job's last state, and the last lines of each task's log."""

    job: J
    tails: dict[str, deque[str]] = field(default_factory=dict)
    timed_out: bool = False

    def tail_of(self, task: str) -> list[str]:
        return list(self.tails.get(task, ()))

    @property
    def ok(self) -> bool:
        """The job completed (and the wait did not give up first)."""
        return not self.timed_out and self.job.phase == "Completed"

    def __repr__(self) -> str:
        # What a notebook cell shows after ``job.wait()``: how it ended, not the deques.
        ended = "still running, the wait timed out" if self.timed_out else "ended"
        kept = ", ".join(f"{task} ({len(lines)})" for task, lines in sorted(self.tails.items()))
        return (
            f"<WaitResult {self.job.name} {ended} {self.job.phase}, id {self.job.id}; "
            f"last log lines kept: {kept or 'none'}>"
        )


def wait_for(
    get_service: Callable[[], JobSource[J]],
    job_id: str,
    *,
    job_name: str | None = None,
    timeout: float | None = None,
    on_update: Callable[[J], None] | None = None,
    on_line: Callable[[str], None] | None = None,
    on_poll: Callable[[J], None] | None = None,
    on_event: Callable[[Event], None] | None = None,
    on_connection: Callable[[str], None] | None = None,
    reconnect: Callable[[], None] | None = None,
    poll: float = 0.25,
    patience: float | None = None,
    masker: Masker | None = None,
) -> WaitResult[J]:
    """Poll job ``job_id`` (named ``job_name``, for messages) until it reaches a terminal phase
    (or ``timeout`` seconds pass). ``on_update`` sees each phase change, ``on_poll`` the job as
    each poll read it (its duration grows between phase changes: a live status shows it),
    ``on_event`` each warning event of the job once (``may be hung``: asked every
    ``EVENT_PERIOD`` seconds, and once more at the end)."""
    masker = masker or Masker()
    cursor = LogCursor(job_id, prefix=True)
    warnings = WarningEvents(job_id, on_event) if on_event is not None else None
    connection = _Connection(
        f"{job_id} ({job_name})" if job_name else job_id,
        wait_patience() if patience is None else patience,
        poll,
        on_connection or (lambda text: None),
        reconnect,
    )
    tails: dict[str, deque[str]] = {}
    started = time.monotonic()
    previous: tuple[str, str] | None = None
    while True:
        try:
            job, lines = read_job(get_service(), job_id, cursor, masker)
        except ServiceUnreachable as error:
            connection.lost(error)
            continue
        connection.named = f"{job.id} ({job.name})"
        connection.answered()
        if on_poll is not None:
            on_poll(job)
        for line in lines:
            task, _, text = line.partition("] ")
            tails.setdefault(task.lstrip("["), deque(maxlen=TAIL)).append(text)
            if on_line is not None:
                on_line(line)
        if warnings is not None:
            warnings.poll(get_service(), final=job.finished)
        if (job.phase, job.secondary_phase) != previous:
            previous = (job.phase, job.secondary_phase)
            if on_update is not None:
                on_update(job)
        if job.finished:
            return WaitResult(job, tails)
        if timeout is not None and time.monotonic() - started > timeout:
            return WaitResult(job, tails, timed_out=True)
        time.sleep(poll)


class WarningEvents:
    """A job's warning events (``worker-0 may be hung: ...``), each handed on once. The service
    is asked every ``EVENT_PERIOD`` seconds, not every poll: it is one more request."""

    def __init__(self, job_id: str, handle: Callable[[Event], None]) -> None:
        self.job_id = job_id
        self.handle = handle
        self.seen: set[tuple[str, str]] = set()
        self.next_ask = 0.0

    def poll(self, service: JobSource[J], *, final: bool = False) -> None:
        now = time.monotonic()
        if now < self.next_ask and not final:
            return
        self.next_ask = now + EVENT_PERIOD
        try:
            events = service.events(self.job_id, limit=20, newest=True, level="Warning")
        except MajobError:
            return  # a warning is advice: the next ask may get it, the wait goes on
        for event in events:
            key = (event.time, event.message)
            if key not in self.seen:
                self.seen.add(key)
                self.handle(event)


def read_job(
    service: JobSource[J], job_id: str, cursor: LogCursor, masker: Masker
) -> tuple[J, list[str]]:
    """One poll of job ``job_id``: its state, and its log lines (masked) written since
    ``cursor`` last read; a job that has ended is read twice over, for what it wrote just
    before the end."""
    job = service.get(job_id)
    lines = cursor.poll(service, job)
    if job.finished:
        lines += cursor.poll(service, job)
    return job, [masker.text(line) for line in lines]


class _Connection:
    """The wait's hold on the service: a lost connection is retried with back-off, through a
    fresh client (``reconnect``), for up to ``patience`` seconds."""

    def __init__(
        self,
        named: str,
        patience: float,
        poll: float,
        say: Callable[[str], None],
        reconnect: Callable[[], None] | None,
    ) -> None:
        self.named = named  # the job, as messages name it
        self.patience = patience
        self.poll = poll
        self.say = say
        self.reconnect = reconnect
        self.lost_since: float | None = None
        self.delay = poll

    def lost(self, error: ServiceUnreachable) -> None:
        """Wait before the next try; give up (``ServiceUnreachable``) once patience ran out."""
        now = time.monotonic()
        if self.lost_since is None:
            self.lost_since = now
            self.say(f"connection lost ({error.message}); retrying")
        elif now - self.lost_since > self.patience:
            raise ServiceUnreachable(
                f"gave up waiting for job {self.named}: ModelArts could not be reached for "
                f"{self.patience:.0f}s ({error.detail})",
                hint="the job may still be running; follow it when the service is back",
            ) from None
        if self.reconnect is not None:
            self.reconnect()
        self.delay = min(self.delay * 2, 2.0)
        time.sleep(self.delay)

    def answered(self) -> None:
        if self.lost_since is not None:
            self.lost_since, self.delay = None, self.poll
            self.say("connection back")

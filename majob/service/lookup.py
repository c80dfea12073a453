"""Which job a reference on the command line means: an id, a short id, or a name.

``majob history`` prints ids shortened to their first 8 characters, so ``majob status
3f2a9c1e`` must work as ``git show 3f2a9c1e`` does: any start of an id that no other job's id
shares. ModelArts searches by name, phase and time only (reference §2.4: no id filter), so a
start is matched against the newest ``SCANNED`` jobs, page by page. A start several ids share
is an error listing them, and so is a reference that is both an id's start and a name
(``cafe``). A name several jobs share (a spec submitted again and again: ``mnist-debug``)
means the newest of them, and the ``JobMatch`` says which others there were, for the caller
to show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from majob.errors import ServiceNotFound, UserInputError
from majob.service.base import Job, JobFilter, TrainingService

SCANNED = 1000  # jobs a prefix is matched against: 20 pages of the service's 50
_SHOWN = 10  # candidates an error or a note lists
_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
_PREFIX = re.compile(r"^[0-9a-f][0-9a-f-]*$")


@dataclass(frozen=True)
class JobMatch:
    """The job a reference means; ``others``: the older jobs of the same name, when it was a
    name several jobs share."""

    job: Job
    others: tuple[Job, ...] = ()

    def note(self) -> str:
        """What to tell the user about the choice ("" when there was none to make)."""
        if not self.others:
            return ""
        return (
            f"{len(self.others) + 1} jobs are named {self.job.name!r}: using the newest, "
            f"{_described(self.job)}; the others: {_listed(list(self.others))} (pass an id to "
            "choose one)"
        )


def find_job(service: TrainingService, ref: str) -> JobMatch:
    """The job ``ref`` names: a full id, a unique start of an id, or a name (the newest of
    that name). ``ServiceNotFound`` when none matches; ``UserInputError`` when it could mean
    several (a start several ids share, or both an id's start and a name)."""
    ref = ref.strip()
    lowered = ref.lower()
    if _UUID.match(lowered):
        try:
            return JobMatch(service.get(lowered))
        except ServiceNotFound:
            pass
    prefixed, complete = _by_prefix(service, lowered) if _PREFIX.match(lowered) else ([], True)
    named = _by_name(service, ref)
    if prefixed and named:
        raise UserInputError(
            f"{ref!r} is the start of job id {_listed(prefixed)} and the name of job "
            f"{_listed(named)}",
            hint="pass more of the id, or the id of the named job",
        )
    if len(prefixed) == 1:
        return JobMatch(prefixed[0])
    if prefixed:
        raise UserInputError(
            f"{len(prefixed)} jobs have ids starting with {ref!r}: {_listed(prefixed)}",
            hint="pass more of the id",
        )
    if not named:
        partial = "" if complete else f" (ids were matched among the newest {SCANNED} jobs)"
        raise ServiceNotFound(
            f"no job has the id, short id or name {ref!r}{partial}",
            hint="`majob list` shows the jobs, `majob history` the ones the ledger ran",
        )
    return JobMatch(named[0], tuple(named[1:]))


def _by_prefix(service: TrainingService, prefix: str) -> tuple[list[Job], bool]:
    """The jobs among the newest ``SCANNED`` whose id starts with ``prefix``; whether those
    were all the jobs."""
    found: list[Job] = []
    offset = 0
    while offset < SCANNED:
        page, total = service.search(JobFilter(), offset=offset, limit=50)
        found += [job for job in page if job.id.lower().startswith(prefix)]
        offset += len(page)
        if not page or offset >= total:
            return found, True
    return found, False


def _by_name(service: TrainingService, name: str) -> list[Job]:
    """The jobs named exactly ``name``, newest first (the search matches a substring)."""
    found: list[Job] = []
    offset = 0
    while offset < SCANNED:
        page, total = service.search(JobFilter(name=name), offset=offset, limit=50)
        found += [job for job in page if job.name == name]
        offset += len(page)
        if not page or offset >= total:
            break
    found.sort(key=lambda job: job.create_time or 0, reverse=True)
    return found


def _listed(jobs: list[Job]) -> str:
    more = f" and {len(jobs) - _SHOWN} more" if len(jobs) > _SHOWN else ""
    return ", ".join(_described(job) for job in jobs[:_SHOWN]) + more


def _described(job: Job) -> str:
    return f"{job.id} ({job.name}, {job.phase})"

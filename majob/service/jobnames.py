"""A free name for a job whose stage was submitted before.

ModelArts creates a job only when no job of its name exists, ended or not (API reference,
ValidateTrainingJobName), so the second submit of ``mnist-digits-debug`` (new code, a re-run
after a failure) would be refused until the first job is deleted. Deleting it would throw its
logs away, so majob numbers the new one instead, as Kubernetes' ``generateName`` and
SageMaker's timestamped job names do: ``mnist-digits-debug-2``, ``-3``, ... A name an *active*
job holds is left alone: a second job of a stage while the first still runs is more likely a
mistake, and the pre-flight says so.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from majob.service.base import Job, JobFilter, TrainingService

NAME_LIMIT = 64  # ModelArts job names: 1-64 of A-Z a-z 0-9 _ -


def jobs_named_like(service: TrainingService, name: str) -> Iterator[Job]:
    """Every job whose name contains ``name`` (the service's search matches a part of the name),
    read page by page."""
    offset = 0
    while True:
        jobs, total = service.search(JobFilter(name=name), offset=offset, limit=50)
        yield from jobs
        offset += len(jobs)
        if not jobs or offset >= total:
            return


def numbered(name: str, number: int) -> str:
    """``name-number``, ``name`` cut so that the whole stays within the 64 characters."""
    suffix = f"-{number}"
    return name[: NAME_LIMIT - len(suffix)] + suffix


def search_stem(name: str) -> str:
    """What to search for to see ``name`` and every numbered name of it (a numbered name cuts a
    long ``name`` to make room for its number)."""
    return name[: NAME_LIMIT - 6]


def free_name(name: str, jobs: Iterable[Job]) -> str | None:
    """The name to submit under, given ``jobs`` (those ``search_stem`` finds): ``name`` itself
    when no job has it; the first free ``name-N`` (N >= 2) when only ended jobs have it; None
    when an active job has it."""
    seen = list(jobs)
    holders = [job for job in seen if job.name == name]
    if not holders:
        return name
    if any(not job.finished for job in holders):
        return None
    number = 2
    names = {job.name for job in seen}
    while numbered(name, number) in names:
        number += 1
    return numbered(name, number)

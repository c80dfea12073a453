"""A job search as ModelArts takes it (``POST training-job-searches``, reference §2.2), and the
same filter applied to its answer: a service that ignores a filter must not widen the list.
Both backends (REST, notebook SDK) search this way."""

from __future__ import annotations

from typing import Any

from majob.service.base import Job, JobFilter

MAX_SEARCH_LIMIT = 50  # the service's page size limit (reference §2.2)


def search_filters(where: JobFilter) -> list[dict[str, Any]]:
    """``where`` as the search's ``filters`` (name ``like``, phase ``in``, create_time
    ``between``)."""
    filters: list[dict[str, Any]] = []
    if where.name:
        filters.append({"key": "name", "operator": "like", "value": [where.name]})
    if where.phases:
        filters.append({"key": "phase", "operator": "in", "value": list(where.phases)})
    if where.created_after is not None or where.created_before is not None:
        low = where.created_after if where.created_after is not None else 0
        high = where.created_before if where.created_before is not None else 2**53
        filters.append(
            {"key": "create_time", "operator": "between", "value": [str(low), str(high)]}
        )
    return filters


def search_body(where: JobFilter, *, offset: int, limit: int) -> dict[str, Any]:
    """One page's search body, newest first."""
    body: dict[str, Any] = {
        "offset": offset,
        "limit": max(1, min(limit, MAX_SEARCH_LIMIT)),
        "sort_by": "create_time",
        "order": "desc",
    }
    filters = search_filters(where)
    if filters:
        body["filters"] = filters
    return body


def matches(job: Job, where: JobFilter) -> bool:
    if where.name and where.name not in job.name:
        return False
    if where.phases and job.phase not in where.phases:
        return False
    created = job.create_time
    if created is not None:
        if where.created_after is not None and created < where.created_after:
            return False
        if where.created_before is not None and created > where.created_before:
            return False
    return True

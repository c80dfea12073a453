"""``POST /training-job-searches``: a page of jobs, filtered and sorted as the body asks
(reference modelarts.md §2.2: offset, limit 1-50, sort_by, order, filters of key, operator and
values)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from majob.emulator.modelarts.errors import bad_request
from majob.emulator.modelarts.render import job_duration
from majob.emulator.modelarts.store import JobRecord

SORT_KEYS: dict[str, Callable[[JobRecord], Any]] = {
    "create_time": lambda j: j.create_time,
    "name": lambda j: j.name,
    "duration": job_duration,
}


def search_jobs(
    jobs: Sequence[JobRecord], body: Any, render: Callable[[JobRecord], dict[str, Any]]
) -> dict[str, Any]:
    """The page of ``jobs`` the search ``body`` asks for, each job shown by ``render``."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise bad_request("the search body must be a JSON object")
    offset, limit = body.get("offset", 0), body.get("limit", 10)
    if not isinstance(offset, int) or offset < 0:
        raise bad_request("offset must be an integer >= 0")
    if not isinstance(limit, int) or not 1 <= limit <= 50:
        raise bad_request("limit must be an integer from 1 to 50")
    order = body.get("order", "desc")
    if order not in ("asc", "desc"):
        raise bad_request("order must be 'asc' or 'desc'")
    sort_by = body.get("sort_by", "create_time")
    if sort_by not in SORT_KEYS:
        raise bad_request(f"sort_by {sort_by!r} is not supported")
    found = [j for j in jobs if _matches(j, body.get("filters") or [])]
    found.sort(key=SORT_KEYS[sort_by], reverse=order == "desc")
    page = found[offset : offset + limit]
    return {
        "total": len(found),
        "count": len(page),
        "limit": limit,
        "offset": offset,
        "sort_by": sort_by,
        "order": order,
        "group_by": body.get("group_by", ""),
        "workspace_id": body.get("workspace_id", "0"),
        "items": [render(j) for j in page],
    }


def _matches(job: JobRecord, filters: Any) -> bool:
    if not isinstance(filters, list):
        raise bad_request("filters must be a list of {key, operator, value}")
    for item in filters:
        if not isinstance(item, dict):
            raise bad_request("each filter must be an object {key, operator, value}")
        key, operator, values = item.get("key"), item.get("operator"), item.get("value")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise bad_request(f"filter {key}: value must be a list of strings")
        if not _holds(job, _field(job, key), key, operator, values):
            return False
    return True


def _field(job: JobRecord, key: Any) -> str:
    if key == "name":
        return job.name
    if key == "phase":
        return job.phase
    if key == "create_time":
        return str(job.create_time)
    raise bad_request(f"filter key {key!r} is not supported by the emulator")


def _holds(job: JobRecord, field: str, key: Any, operator: Any, values: list[str]) -> bool:
    if operator == "like":
        return any(v.lower() in field.lower() for v in values)
    if operator == "in":
        return field in values
    if operator == "not":
        return field not in values
    if operator == "between":
        if key != "create_time" or len(values) != 2:
            raise bad_request("between takes create_time and two values [start, end] (ms)")
        try:
            return int(values[0]) <= job.create_time <= int(values[1])
        except ValueError:
            raise bad_request("between takes two times in ms since the epoch") from None
    raise bad_request(f"filter operator {operator!r} is invalid", "use between, like, in, not")

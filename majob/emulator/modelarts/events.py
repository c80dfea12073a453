"""``GET .../training-jobs/{id}/events``: one page of a job's events, filtered as the query asks
(reference modelarts.md §2.2: ``offset``, ``limit`` ≤ 100, ``order``, ``start_time`` +
``end_time``, ``level``, ``pattern``).

``start_time`` and ``end_time`` bound the events' times, both ends included; each is taken as
milliseconds since the epoch or as the ISO-8601 UTC time the events themselves carry
(``2026-01-01T10:00:00.000Z``): the API reference does not say which, so both are read.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime, timezone
from typing import Any

from majob.emulator.modelarts.errors import bad_request
from majob.emulator.modelarts.render import iso_time
from majob.emulator.modelarts.store import EventRecord


def moment(value: str, name: str) -> int:
    """``value`` (ms since the epoch, or an ISO-8601 time) in ms; refused otherwise."""
    if value.isdigit():
        return int(value)
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise bad_request(
            f"{name} {value!r} is not a time",
            "give milliseconds since the epoch or an ISO-8601 time such as 2026-01-01T10:00:00Z",
        ) from None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=timezone.utc)
    return int(parsed.timestamp() * 1000)


def events_page(
    events: Iterable[EventRecord],
    *,
    offset: int = 0,
    limit: int = 100,
    order: str = "asc",
    level: str | None = None,
    pattern: str | None = None,
    start_time: str | None = None,
    end_time: str | None = None,
) -> dict[str, Any]:
    """The page of ``events`` (oldest first) the query asks for."""
    if not 1 <= limit <= 100 or offset < 0:
        raise bad_request("limit must be from 1 to 100 and offset >= 0")
    if order not in ("asc", "desc"):
        raise bad_request("order must be 'asc' or 'desc'")
    low = moment(start_time, "start_time") if start_time else None
    high = moment(end_time, "end_time") if end_time else None
    if low is not None and high is not None and low > high:
        raise bad_request("start_time is after end_time")
    chosen = [
        e
        for e in events
        if (level is None or e.level == level)
        and (not pattern or pattern in e.message)
        and (low is None or e.time >= low)
        and (high is None or e.time <= high)
    ]
    if order == "desc":
        chosen.reverse()
    page = chosen[offset : offset + limit]
    return {
        "total": len(chosen),
        "limit": limit,
        "offset": offset,
        "order": order,
        "events": [
            {"time": iso_time(e.time), "level": e.level, "message": e.message, "source": e.source}
            for e in page
        ],
    }

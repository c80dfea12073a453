"""Rule-based fault injection and the request log of the fake OBS server.

A ``FaultRule`` matches requests by method, path and query (regular expressions), fires at most
``count`` times with ``probability`` (drawn from the injector's seeded RNG, so a run replays) and
then answers with an OBS error status, resets the connection in the middle of a body, or adds
latency before the request is handled.
"""

from __future__ import annotations

import random
import re
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any

# The code OBS sends with each status when the rule names none.
DEFAULT_CODES = {
    400: ("BadRequest", "Bad Request"),
    403: ("AccessDenied", "Access Denied"),
    404: ("NoSuchKey", "The specified key does not exist."),
    409: ("OperationAborted", "A conflicting conditional operation is in progress."),
    500: ("InternalError", "We encountered an internal error. Please try again."),
    501: ("NotImplemented", "A header you provided implies functionality that is not implemented"),
    503: ("ServiceUnavailable", "Please reduce your request rate."),
}


@dataclass
class FaultRule:
    """One fault. Empty matchers match everything; ``count=None`` fires without limit."""

    status: int | None = None
    code: str | None = None
    reset: bool = False  # drop the connection half-way through the request or response body
    latency: float = 0.0  # seconds added before the request is handled
    method: str | None = None
    path: str | None = None  # regex searched in the decoded path, e.g. r"^/bkt/data/"
    query: str | None = None  # regex searched in the raw query string, e.g. r"partNumber=3\b"
    count: int | None = None
    probability: float = 1.0
    fired: int = field(default=0, compare=False)

    def __post_init__(self) -> None:
        if self.status is None and not self.reset and self.latency <= 0:
            raise ValueError("a fault rule needs a status, reset=True or a latency")
        if not 0.0 <= self.probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        for name, pattern in (("path", self.path), ("query", self.query)):
            if pattern is not None:
                try:
                    re.compile(pattern)
                except re.error as error:  # not a ValueError: the control API would answer 500
                    raise ValueError(
                        f"{name} {pattern!r} is not a regular expression: {error}"
                    ) from None

    def matches(self, method: str, path: str, query: str) -> bool:
        return (
            (self.method is None or self.method.upper() == method)
            and (self.path is None or re.search(self.path, path) is not None)
            and (self.query is None or re.search(self.query, query) is not None)
        )

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> FaultRule:
        known = {name for name in cls.__dataclass_fields__ if name != "fired"}
        unknown = set(data) - known
        if unknown:
            raise ValueError(f"unknown fault rule fields: {', '.join(sorted(unknown))}")
        return cls(**dict(data))

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Fault:
    """What the server must do to one request."""

    status: int | None
    code: str
    message: str
    reset: bool
    latency: float

    @property
    def label(self) -> str:
        if self.reset:
            return "reset"
        if self.status is not None:
            return f"status:{self.status}"
        return f"latency:{self.latency}"


class FaultInjector:
    """The active rules; thread-safe, deterministic for a given seed and request order."""

    def __init__(self, rules: Iterable[FaultRule] = (), *, seed: int = 0) -> None:
        self._lock = threading.Lock()
        self._rules = list(rules)
        self._random = random.Random(seed)

    def add(self, rule: FaultRule) -> FaultRule:
        with self._lock:
            self._rules.append(rule)
        return rule

    def clear(self, *, seed: int | None = None) -> None:
        with self._lock:
            self._rules.clear()
            if seed is not None:
                self._random.seed(seed)

    @property
    def rules(self) -> list[FaultRule]:
        with self._lock:
            return list(self._rules)

    def pick(self, method: str, path: str, query: str) -> Fault | None:
        """The fault for this request (first matching rule that fires), or None."""
        with self._lock:
            for rule in self._rules:
                if rule.count is not None and rule.fired >= rule.count:
                    continue
                if not rule.matches(method, path, query):
                    continue
                if rule.probability < 1.0 and self._random.random() >= rule.probability:
                    continue
                rule.fired += 1
                code, message = DEFAULT_CODES.get(rule.status or 0, ("InternalError", "Fault"))
                return Fault(
                    rule.status, rule.code or code, message, rule.reset, max(rule.latency, 0.0)
                )
        return None


@dataclass(frozen=True)
class LoggedRequest:
    """One request as the fake saw it, for assertions in tests."""

    method: str
    path: str  # decoded, /bucket/key
    query: str  # raw query string
    status: int
    family: str  # "obs" when the request used x-obs-* headers or OBS auth, else "amz"
    auth: str  # "v2", "obs", "v4" or "anonymous"
    error: str | None = None  # the OBS error code answered, if any
    fault: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class RequestLog:
    """The last ``limit`` requests, in arrival order."""

    def __init__(self, limit: int = 200_000) -> None:
        self._lock = threading.Lock()
        self._entries: deque[LoggedRequest] = deque(maxlen=limit)

    def append(self, entry: LoggedRequest) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> list[LoggedRequest]:
        with self._lock:
            return list(self._entries)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def count(self, method: str | None = None, query: str | None = None) -> int:
        """How many requests had ``method`` and a raw query matching regex ``query``."""
        return sum(
            1
            for e in self.entries()
            if (method is None or e.method == method)
            and (query is None or re.search(query, e.query) is not None)
        )

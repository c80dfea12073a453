"""Fault injection and the request log of the fake OBS server: the shared rules of
``majob.emulator.http`` with OBS's error codes, and ``LoggedRequest``, what the log keeps of one
OBS request.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from majob.emulator import http
from majob.emulator.http import Fault, FaultRule, RequestLog

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


class FaultInjector(http.FaultInjector):
    """The shared injector, answering OBS's code for each status a rule names no code for."""

    def __init__(self, rules: Iterable[FaultRule] = (), *, seed: int = 0) -> None:
        super().__init__(rules, seed=seed, codes=DEFAULT_CODES)


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


__all__ = ["DEFAULT_CODES", "Fault", "FaultInjector", "FaultRule", "LoggedRequest", "RequestLog"]

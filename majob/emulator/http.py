"""The HTTP and control-plane layer both fakes stand on (the fake OBS and the fake ModelArts).

- ``FaultRule`` / ``FaultInjector``: seeded, counted faults matched by method, path and query
  regexes: an error status, a connection reset half-way, or latency.
- ``RequestLog``: the last requests a fake saw, for assertions in tests.
- ``EmulatorServer``: a ``ThreadingHTTPServer`` on 127.0.0.1 (HTTP/1.1, keep-alive) run in a
  thread of this process or as a process's main loop, with ``start``/``stop``/``with``.
- ``control``: the test control plane under ``CONTROL_PREFIX`` (``/_majob/log``,
  ``/_majob/faults``), so a test can drive a fake that runs in another process.
- ``reset_connection``: end a connection with RST, as a dropped load balancer does.
- ``declared_length``: where a request's body ends, or ``BadFraming`` when nobody can tell.
"""

from __future__ import annotations

import json
import random
import re
import socket
import struct
import sys
import threading
from collections import deque
from collections.abc import Iterable, Mapping
from dataclasses import asdict, dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, Protocol, TypeVar

from pydantic import (
    ConfigDict,
    Field,
    ValidationError,
    ValidationInfo,
    field_validator,
    model_validator,
)
from pydantic.dataclasses import dataclass as pydantic_dataclass

CONTROL_PREFIX = "/_majob/"  # not a bucket name nor a ModelArts path: the control plane


@pydantic_dataclass(config=ConfigDict(extra="forbid", strict=True))
class FaultRule:
    """One fault. Empty matchers match everything; ``count=None`` fires without limit.

    Every field is checked for its type and range when a rule is made, from a test's keywords
    or the control plane's JSON alike (no coercion: ``"count": "1"`` is refused); a bad rule is
    a ``ValueError`` (pydantic's), which the control plane answers with 400."""

    status: int | None = Field(default=None, ge=100, le=599)
    code: str | None = None
    reset: bool = False  # drop the connection half-way through the request or response body
    latency: float = Field(default=0.0, ge=0.0, le=600.0)  # seconds added before handling
    method: str | None = None
    path: str | None = None  # regex searched in the decoded path, e.g. r"^/bkt/data/"
    query: str | None = None  # regex searched in the raw query string, e.g. r"partNumber=3\b"
    count: int | None = Field(default=None, ge=0)
    probability: float = 1.0
    fired: int = field(default=0, init=False, compare=False)  # counted here, never given

    @field_validator("probability")
    @classmethod
    def _a_probability(cls, probability: float) -> float:
        if not 0.0 <= probability <= 1.0:
            raise ValueError("probability must be between 0 and 1")
        return probability

    @field_validator("path", "query")
    @classmethod
    def _a_regex(cls, pattern: str | None, info: ValidationInfo) -> str | None:
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as error:  # not a ValueError: the control API would answer 500
                raise ValueError(
                    f"{info.field_name} {pattern!r} is not a regular expression: {error}"
                ) from None
        return pattern

    @model_validator(mode="after")
    def _does_something(self) -> FaultRule:
        if self.status is None and not self.reset and self.latency <= 0:
            raise ValueError("a fault rule needs a status, reset=true or a latency")
        return self

    def matches(self, method: str, path: str, query: str) -> bool:
        return (
            (self.method is None or self.method.upper() == method)
            and (self.path is None or re.search(self.path, path) is not None)
            and (self.query is None or re.search(self.query, query) is not None)
        )

    @classmethod
    def from_dict(cls, data: Any) -> FaultRule:
        """A rule from untrusted input (the control plane's JSON); ``ValueError`` with the
        reasons, on one line, otherwise."""
        if not isinstance(data, dict):
            raise ValueError("a fault rule must be an object")
        try:
            return cls(**data)
        except ValidationError as error:
            raise ValueError(_reasons(error)) from None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _reasons(error: ValidationError) -> str:
    """One line: each wrong field and why (``count: Input should be a valid integer``)."""
    problems = error.errors()
    unknown = [str(e["loc"][-1]) for e in problems if e["type"] == "unexpected_keyword_argument"]
    reasons = [f"unknown fault rule fields: {', '.join(sorted(unknown))}"] if unknown else []
    for e in problems:
        if e["type"] == "unexpected_keyword_argument":
            continue
        message = e["msg"].removeprefix("Value error, ")
        where = ".".join(map(str, e["loc"]))
        reasons.append(
            f"{where}: {message}" if where and not message.startswith(where) else message
        )
    return "; ".join(reasons)


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
    """The active rules; thread-safe, deterministic for a given seed and request order.
    ``codes`` gives the service's error code and message for a status a rule names no code for."""

    def __init__(
        self,
        rules: Iterable[FaultRule] = (),
        *,
        seed: int = 0,
        codes: Mapping[int, tuple[str, str]] | None = None,
    ) -> None:
        self._lock = threading.Lock()
        self._rules = list(rules)
        self._random = random.Random(seed)
        self._codes = dict(codes or {})

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
                code, message = self._codes.get(rule.status or 0, ("InternalError", "Fault"))
                return Fault(
                    rule.status, rule.code or code, message, rule.reset, max(rule.latency, 0.0)
                )
        return None


class LogEntry(Protocol):
    """What a request log holds: at least the method and raw query, and a JSON form."""

    @property
    def method(self) -> str: ...

    @property
    def query(self) -> str: ...

    def to_dict(self) -> dict[str, Any]: ...


EntryT = TypeVar("EntryT", bound=LogEntry)


class RequestLog(Generic[EntryT]):
    """The last ``limit`` requests, in arrival order."""

    def __init__(self, limit: int = 200_000) -> None:
        self._lock = threading.Lock()
        self._entries: deque[EntryT] = deque(maxlen=limit)

    def append(self, entry: EntryT) -> None:
        with self._lock:
            self._entries.append(entry)

    def entries(self) -> list[EntryT]:
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


def control(
    what: str, method: str, body: bytes, faults: FaultInjector, log: RequestLog[Any]
) -> tuple[int, Any] | None:
    """Answer ``/_majob/log`` (GET, DELETE) and ``/_majob/faults`` (GET, POST a rule, DELETE):
    ``(status, JSON payload)``, or None for a path this layer does not own."""
    try:
        if what == "log" and method == "GET":
            return 200, [entry.to_dict() for entry in log.entries()]
        if what == "log" and method == "DELETE":
            log.clear()
            return 200, {"cleared": True}
        if what == "faults" and method == "GET":
            return 200, [rule.to_dict() for rule in faults.rules]
        if what == "faults" and method == "POST":
            rule = FaultRule.from_dict(json.loads(body or b"{}"))
            return 200, faults.add(rule).to_dict()
        if what == "faults" and method == "DELETE":
            faults.clear()
            return 200, {"cleared": True}
    except (ValueError, TypeError) as error:
        return 400, {"error": str(error)}
    return None


class BadFraming(ValueError):
    """A Content-Length that is not a non-negative integer: where the body ends is unknown, so
    the server answers 400 and closes the connection (the rest is not a next request)."""


def declared_length(content_length: str | None, transfer_encoding: str | None) -> int | None:
    """The body length a request declares: None for a chunked body, else its Content-Length
    (0 when absent). ``int()`` alone would take ``-5`` (and a read of -5 bytes waits for the
    client to hang up, holding a handler thread) or raise on ``abc`` (a 500)."""
    if "chunked" in (transfer_encoding or "").lower():
        return None
    text = (content_length or "").strip() or "0"
    if not (text.isascii() and text.isdigit()):
        raise BadFraming(f"Content-Length must be a non-negative integer, not {text[:40]!r}")
    return int(text)


def reset_connection(handler: BaseHTTPRequestHandler) -> None:
    """Reset the connection (RST, not FIN): what a dropped load balancer looks like."""
    handler.wfile.flush()
    handler.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    handler.close_connection = True
    handler.connection.close()


class LoopbackHTTPServer(ThreadingHTTPServer):
    """A threading HTTP server whose handlers reach their fake as ``self.server.fake``."""

    daemon_threads = True
    request_queue_size = 256

    def __init__(
        self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler], fake: Any
    ) -> None:
        self.fake = fake
        # Set by ``EmulatorServer.stop`` before the fake's state closes: handlers still running
        # then (daemon threads are not joined) hang up instead of reporting the closed state.
        self.stopping = False
        super().__init__(address, handler)

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Clients that hang up (killed, reset, timed out) are normal here, not worth a trace."""
        error = sys.exc_info()[1]
        if isinstance(error, (ConnectionError, TimeoutError)):
            return
        super().handle_error(request, client_address)


class EmulatorServer:
    """A fake service on 127.0.0.1: in a daemon thread (``start``/``stop``, ``with``) or as the
    main loop of a process (``serve_forever``). Subclasses set ``faults`` and ``log`` and close
    their state in ``close``."""

    thread_name = "emulator"
    server_class: type[LoopbackHTTPServer] = LoopbackHTTPServer

    def __init__(self, handler: type[BaseHTTPRequestHandler], *, port: int = 0) -> None:
        self._httpd = self.server_class(("127.0.0.1", port), handler, self)
        self._thread: threading.Thread | None = None

    @property
    def port(self) -> int:
        return int(self._httpd.server_address[1])

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Any:
        """Serve from a daemon thread of this process; returns the server."""
        self._thread = threading.Thread(
            target=self._httpd.serve_forever, name=self.thread_name, kwargs={"poll_interval": 0.05}
        )
        self._thread.daemon = True
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        self._httpd.serve_forever(poll_interval=0.2)

    def shutdown(self) -> None:
        """Stop serving (from another thread than the one in ``serve_forever``)."""
        self._httpd.shutdown()

    def stop(self) -> None:
        self._httpd.stopping = True
        if self._thread is not None:
            self._httpd.shutdown()
            self._thread.join()
            self._thread = None
        self._httpd.server_close()
        self.close()

    def close(self) -> None:
        """Release the fake's state (files, databases); called once by ``stop``."""

    def __enter__(self) -> Any:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

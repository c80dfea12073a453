"""The HTTP adapter of the fake ModelArts: REST v2 training-job requests in, JSON out.

Every request under ``/v2/{project_id}/`` is signature-checked (``auth.py``), may meet an
injected fault (429/503/a dropped connection/latency, from the shared layer), is routed to the
backend (``models.py``) and answered with the service's JSON or its error body. The control plane
(``/_majob/...``) adds to the shared log and fault routes: ``job-faults`` (a job that fails at a
phase, slow phases) and ``logs/<job>/<task>`` (what a log URL points at).
"""

from __future__ import annotations

import json
import re
import secrets
import time
import traceback
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl, unquote

from majob.emulator.defaults import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, EMULATOR_PROJECT_ID
from majob.emulator.http import (
    CONTROL_PREFIX,
    BadFraming,
    EmulatorServer,
    FaultInjector,
    FaultRule,
    LoopbackHTTPServer,
    RequestLog,
    control,
    declared_length,
    reset_connection,
)
from majob.emulator.modelarts import auth, errors
from majob.emulator.modelarts.errors import ModelArtsError
from majob.emulator.modelarts.jobfaults import JobFault
from majob.emulator.modelarts.models import ModelArtsBackend
from majob.emulator.modelarts.storage import JobStorage

# The code and message ModelArts answers with for a fault status a rule names no code for.
FAULT_CODES = {
    429: (errors.THROTTLED, "Too many requests: the request rate exceeds the limit."),
    500: ("ModelArts.0001", "Internal error."),
    503: (errors.UNAVAILABLE, "The service is temporarily unavailable."),
}
MAX_BODY = 8 * 1024 * 1024


@dataclass(frozen=True)
class LoggedCall:
    """One request as the fake saw it, for assertions in tests."""

    method: str
    path: str
    query: str
    status: int
    error: str | None = None  # the error code answered, if any
    fault: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


Route = tuple[str, re.Pattern[str], str]
_ID = r"(?P<job>[A-Za-z0-9-]+)"
_TASK = r"(?P<task>[A-Za-z0-9_-]+)"
ROUTES: list[Route] = [
    ("POST", re.compile(r"^training-jobs$"), "create"),
    ("POST", re.compile(r"^training-job-searches$"), "search"),
    ("GET", re.compile(r"^training-job-flavors$"), "flavors"),
    ("GET", re.compile(r"^training-job-engines$"), "engines"),
    ("GET", re.compile(rf"^training-jobs/{_ID}$"), "show"),
    ("PUT", re.compile(rf"^training-jobs/{_ID}$"), "update"),
    ("DELETE", re.compile(rf"^training-jobs/{_ID}$"), "delete"),
    ("POST", re.compile(rf"^training-jobs/{_ID}/actions$"), "terminate"),
    ("GET", re.compile(rf"^training-jobs/{_ID}/tasks$"), "tasks"),
    ("GET", re.compile(rf"^training-jobs/{_ID}/tasks/{_TASK}/logs/preview$"), "preview"),
    ("GET", re.compile(rf"^training-jobs/{_ID}/tasks/{_TASK}/logs/url$"), "log_url"),
    ("GET", re.compile(rf"^training-jobs/{_ID}/logs/{_TASK}$"), "log_lines"),
    ("GET", re.compile(rf"^training-jobs/{_ID}/events$"), "events"),
    ("GET", re.compile(rf"^training-jobs/{_ID}/metrics/{_TASK}$"), "metrics"),
]


class _Httpd(LoopbackHTTPServer):
    fake: FakeModelArtsServer


class FakeModelArtsServer(EmulatorServer):
    """The fake ModelArts on 127.0.0.1. ``state_dir`` holds its database and job trees;
    ``storage`` is the fake OBS the jobs use; ``credentials`` maps access keys to secret keys
    (None: the emulator's test pair)."""

    thread_name = "fake-modelarts"
    server_class = _Httpd

    def __init__(
        self,
        state_dir: Path,
        *,
        storage: JobStorage | None,
        port: int = 0,
        project_id: str = EMULATOR_PROJECT_ID,
        credentials: Mapping[str, str] | None = None,
        seed: int = 0,
        python: str | None = None,
        upload_period: float = 30.0,
    ) -> None:
        self.backend = ModelArtsBackend(
            state_dir, storage=storage, python=python, upload_period=upload_period
        )
        self.project_id = project_id
        self.credentials = dict(
            {DEFAULT_ACCESS_KEY: DEFAULT_SECRET_KEY} if credentials is None else credentials
        )
        self.faults = FaultInjector(seed=seed, codes=FAULT_CODES)
        self.log: RequestLog[LoggedCall] = RequestLog()
        super().__init__(ModelArtsRequestHandler, port=port)

    def add_fault(self, **rule: Any) -> FaultRule:
        """Add a ``FaultRule``, e.g. ``add_fault(status=503, method="POST", count=1)``."""
        return self.faults.add(FaultRule(**rule))

    def add_job_fault(self, **fault: Any) -> JobFault:
        """Add a ``JobFault``, e.g. ``add_job_fault(fail_at="Running")``."""
        return self.backend.job_faults.add(JobFault(**fault))

    def start(self) -> FakeModelArtsServer:
        super().start()
        return self

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> FakeModelArtsServer:
        return self.start()


class ModelArtsRequestHandler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "ModelArts-emulator"
    sys_version = ""
    disable_nagle_algorithm = True
    server: _Httpd

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def do_GET(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _read_body(self) -> bytes:
        try:
            length = declared_length(
                self.headers.get("Content-Length"), self.headers.get("Transfer-Encoding")
            )
        except BadFraming as error:
            self.close_connection = True  # where the body ends is unknown: nothing more is read
            raise errors.bad_request(str(error)) from None
        if length is None:
            # The service's SDKs always send a Content-Length; unread chunks would be taken for
            # the next request.
            self.close_connection = True
            raise errors.bad_request("a chunked request body is not supported: send Content-Length")
        if length > MAX_BODY:
            self.close_connection = True  # the unread body would be taken for the next request
            raise errors.bad_request("the request body is too large")
        return self.rfile.read(length) if length else b""

    def _handle(self) -> None:
        fake = self.server.fake
        raw_path, _, raw_query = self.path.partition("?")
        path = unquote(raw_path)
        self.request_id = secrets.token_hex(16)
        if path.startswith(CONTROL_PREFIX):
            self._control(path[len(CONTROL_PREFIX) :])
            return
        fault = fake.faults.pick(self.command, path, raw_query)
        if fault is not None and fault.latency:
            time.sleep(fault.latency)
        if fault is not None and fault.reset:
            fake.log.append(LoggedCall(self.command, path, raw_query, 0, None, fault.label))
            reset_connection(self)
            return
        status, payload, code = 500, None, None
        try:
            body = self._read_body()
            if fault is not None and fault.status is not None:
                raise ModelArtsError(fault.status, fault.code, fault.message, "retry later")
            status, payload = self._dispatch(path, raw_query, body)
        except ModelArtsError as error:
            status, payload, code = error.status, error.body(), error.code
        except Exception as error:
            if self.server.stopping:
                # The emulator is going down under this request (its state is closed): a dying
                # service hangs up, it does not answer 500.
                reset_connection(self)
                return
            # A bug of the fake: answer 500 rather than hang up.
            traceback.print_exc()
            status, code = 500, "ModelArts.0001"
            payload = {"error_code": code, "error_msg": f"emulator error: {error!r}"}
        fake.log.append(
            LoggedCall(self.command, path, raw_query, status, code, fault.label if fault else None)
        )
        self._send_json(status, payload)

    def _send_json(self, status: int, payload: Any) -> None:
        data = b"" if payload is None else json.dumps(payload).encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json;charset=UTF-8")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("X-Request-Id", self.request_id)
        if self.close_connection:
            self.send_header("Connection", "close")
        self.end_headers()
        if data:
            self.wfile.write(data)

    def _dispatch(self, path: str, raw_query: str, body: bytes) -> tuple[int, Any]:
        fake = self.server.fake
        match = re.match(r"^/v2/(?P<project>[^/]+)/(?P<rest>.*?)/?$", path)
        if match is None:
            raise ModelArtsError(404, errors.NOT_FOUND, f"no such API: {self.command} {path}")
        query = parse_qsl(raw_query, keep_blank_values=True)
        headers = {name.lower(): value for name, value in self.headers.items()}
        auth.verify(
            method=self.command,
            path=path,
            query=query,
            headers=headers,
            body=body,
            credentials=fake.credentials,
        )
        if match["project"] != fake.project_id:
            raise ModelArtsError(
                403,
                "ModelArts.0103",
                f"project {match['project']} is not the project of these credentials",
                f"use project id {fake.project_id}",
            )
        for method, pattern, name in ROUTES:
            found = pattern.match(match["rest"])
            if found is None:
                continue
            if method != self.command:
                continue
            return self._call(name, found.groupdict(), dict(query), body)
        raise ModelArtsError(404, errors.NOT_FOUND, f"no such API: {self.command} {path}")

    def _call(
        self, name: str, params: dict[str, str], query: dict[str, str], body: bytes
    ) -> tuple[int, Any]:
        backend = self.server.fake.backend
        job = params.get("job", "")
        task = params.get("task", "")

        def parsed() -> Any:
            try:
                return json.loads(body) if body else None
            except ValueError:
                raise errors.bad_request("the request body is not valid JSON") from None

        handlers: dict[str, Callable[[], tuple[int, Any]]] = {
            "create": lambda: (201, backend.create(parsed())),
            "search": lambda: (200, backend.search(parsed())),
            "flavors": lambda: (200, backend.flavors(query.get("flavor_type"))),
            "engines": lambda: (200, backend.engines()),
            "show": lambda: (200, backend.show(job)),
            "update": lambda: (200, backend.update(job, parsed())),
            "delete": lambda: self._deleted(job),
            "terminate": lambda: (202, backend.terminate(job, parsed())),
            "tasks": lambda: (200, backend.tasks(job)),
            "preview": lambda: (200, backend.log_preview(job, task)),
            "log_url": lambda: (200, self._log_url(job, task)),
            "log_lines": lambda: (
                200,
                backend.log_lines(
                    job,
                    task,
                    _int(query, "base_line", 0),
                    _int(query, "lines", 500),
                    query.get("order", "asc"),
                ),
            ),
            "events": lambda: (
                200,
                backend.events(
                    job,
                    offset=_int(query, "offset", 0),
                    limit=_int(query, "limit", 100),
                    order=query.get("order", "asc"),
                    level=query.get("level") or None,
                    pattern=query.get("pattern") or None,
                ),
            ),
            "metrics": lambda: (200, backend.metrics(job, task)),
        }
        return handlers[name]()

    def _deleted(self, job: str) -> tuple[int, Any]:
        self.server.fake.backend.delete(job)
        return 202, None

    def _log_url(self, job: str, task: str) -> dict[str, str]:
        """A URL anyone can read the task's log from for a while, as the service's signed OBS
        URL; the emulator serves it from its control plane."""
        self.server.fake.backend.log_file(job, task)
        host = self.headers.get("Host") or f"127.0.0.1:{self.server.fake.port}"
        return {"obs_url": f"http://{host}{CONTROL_PREFIX}logs/{job}/{task}"}

    # -- control plane -----------------------------------------------------------------------

    def _control(self, what: str) -> None:
        fake = self.server.fake
        try:
            body = self._read_body()
        except ModelArtsError as error:
            self._send_json(error.status, error.body())
            return
        shared = control(what, self.command, body, fake.faults, fake.log)
        answer = shared if shared is not None else self._own_control(what, body)
        if isinstance(answer, bytes):
            self.send_response(200)
            self.send_header("Content-Type", "text/plain; charset=utf-8")
            self.send_header("Content-Length", str(len(answer)))
            self.end_headers()
            self.wfile.write(answer)
            return
        self._send_json(*answer)

    def _own_control(self, what: str, body: bytes) -> tuple[int, Any] | bytes:
        backend = self.server.fake.backend
        try:
            if what == "job-faults" and self.command == "GET":
                return 200, [_fault_dict(f) for f in backend.job_faults.all()]
            if what == "job-faults" and self.command == "POST":
                data = json.loads(body or b"{}")
                if not isinstance(data, dict):
                    raise ValueError("a job fault is a JSON object")
                return 200, _fault_dict(backend.job_faults.add(JobFault(**data)))
            if what == "job-faults" and self.command == "DELETE":
                backend.job_faults.clear()
                return 200, {"cleared": True}
            if what == "jobs" and self.command == "GET":
                return 200, backend.phase_counts()
            found = re.match(rf"^logs/{_ID}/{_TASK}$", what)
            if found is not None and self.command == "GET":
                path = backend.log_file(found["job"], found["task"])
                return path.read_bytes() if path.exists() else b""
        except ModelArtsError as error:
            return error.status, error.body()
        except (TypeError, ValueError) as error:
            return 400, {"error": str(error)}
        return 404, {"error": "unknown"}


def _fault_dict(fault: JobFault) -> dict[str, Any]:
    return asdict(fault)


def _int(query: Mapping[str, str], name: str, default: int) -> int:
    text = query.get(name)
    if text is None or text == "":
        return default
    try:
        return int(text)
    except ValueError:
        raise errors.bad_request(f"{name} must be an integer") from None

"""The HTTP adapter of the fake ModelArts: REST v2 training-job requests in, JSON out.

Every request under ``/v2/{project_id}/`` is signature-checked (``auth.py``), may meet an
injected fault (429/503/a dropped connection/latency, from the shared layer), is routed to the
backend (``models.py``) and answered with the service's JSON or its error body. The control plane
(``/_majob/...``) adds to the shared log and fault routes: ``job-faults`` (a job that fails at a
phase, slow phases) and ``logs/<job>/<task>`` (what a signed log URL points at). A fault rule
with ``lose_answer`` lets the request take effect, then drops the connection before the answer.
"""

from __future__ import annotations

import json
import re
import secrets
import time
import traceback
from collections.abc import Mapping
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
from majob.emulator.modelarts.logurl import LogFile, LogUrlRefused, LogUrlSigner
from majob.emulator.modelarts.models import ModelArtsBackend
from majob.emulator.modelarts.routes import JOB, TASK, Request, answer, find_route, log_path
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
        self.log_urls = LogUrlSigner()  # ``log_urls.valid_seconds``: how long a log URL works
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
        self._raw_query = raw_query
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
        if fault is not None and fault.lose_answer:
            reset_connection(self)  # it was carried out; the client never hears so
            return
        self._send_json(status, payload)

    def _send_json(self, status: int, payload: Any) -> None:
        # A 204 has no body (HTTP): an error code answered with it is in the request log only.
        data = b"" if payload is None or status == 204 else json.dumps(payload).encode("utf-8")
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
        found = find_route(self.command, match["rest"])
        if found is None:
            raise ModelArtsError(404, errors.NOT_FOUND, f"no such API: {self.command} {path}")
        name, params = found
        host = self.headers.get("Host") or f"127.0.0.1:{fake.port}"
        return answer(fake.backend, fake.log_urls, name, Request(params, dict(query), body, host))

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
        if isinstance(answer, LogFile):
            self.send_response(200)
            self.send_header("Content-Type", answer.content_type)
            self.send_header("Content-Length", str(len(answer.data)))
            self.end_headers()
            self.wfile.write(answer.data)
            return
        self._send_json(*answer)

    def _own_control(self, what: str, body: bytes) -> tuple[int, Any] | LogFile:
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
            found = re.match(rf"^logs/{JOB}/{TASK}$", what)
            if found is not None and self.command == "GET":
                content_type = self.server.fake.log_urls.check(
                    log_path(found["job"], found["task"]), dict(parse_qsl(self._raw_query))
                )
                path = backend.log_file(found["job"], found["task"])
                return LogFile(path.read_bytes() if path.exists() else b"", content_type)
        except LogUrlRefused as refused:
            return 403, {"Code": refused.code, "Message": refused.message}
        except ModelArtsError as error:
            return error.status, error.body()
        except (TypeError, ValueError) as error:
            return 400, {"error": str(error)}
        return 404, {"error": "unknown"}


def _fault_dict(fault: JobFault) -> dict[str, Any]:
    return asdict(fault)

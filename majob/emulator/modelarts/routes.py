"""The fake ModelArts's REST v2 routes: which path and method is which operation, and the
operation's answer from the backend (status and JSON payload).

Every path is under ``/v2/{project_id}/`` (reference modelarts.md §2.2); ``server.py`` checks
the signature and the project before it asks ``answer``.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from majob.emulator.http import CONTROL_PREFIX
from majob.emulator.modelarts import errors
from majob.emulator.modelarts.logurl import CONTENT_TYPES, LogUrlSigner
from majob.emulator.modelarts.models import ModelArtsBackend

Route = tuple[str, re.Pattern[str], str]
JOB = r"(?P<job>[A-Za-z0-9-]+)"
TASK = r"(?P<task>[A-Za-z0-9_-]+)"
ROUTES: list[Route] = [
    ("POST", re.compile(r"^training-jobs$"), "create"),
    ("POST", re.compile(r"^training-job-searches$"), "search"),
    ("GET", re.compile(r"^training-job-names$"), "names"),
    ("GET", re.compile(r"^training-job-flavors$"), "flavors"),
    ("GET", re.compile(r"^training-job-engines$"), "engines"),
    ("GET", re.compile(rf"^training-jobs/{JOB}$"), "show"),
    ("PUT", re.compile(rf"^training-jobs/{JOB}$"), "update"),
    ("DELETE", re.compile(rf"^training-jobs/{JOB}$"), "delete"),
    ("POST", re.compile(rf"^training-jobs/{JOB}/actions$"), "terminate"),
    ("GET", re.compile(rf"^training-jobs/{JOB}/tasks$"), "tasks"),
    ("GET", re.compile(rf"^training-jobs/{JOB}/tasks/{TASK}/logs/preview$"), "preview"),
    ("GET", re.compile(rf"^training-jobs/{JOB}/tasks/{TASK}/logs/url$"), "log_url"),
    ("GET", re.compile(rf"^training-jobs/{JOB}/logs/{TASK}$"), "log_lines"),
    ("GET", re.compile(rf"^training-jobs/{JOB}/events$"), "events"),
    ("GET", re.compile(rf"^training-jobs/{JOB}/metrics/{TASK}$"), "metrics"),
]


def find_route(method: str, rest: str) -> tuple[str, dict[str, str]] | None:
    """The operation ``method`` on ``rest`` (the path after ``/v2/{project_id}/``) asks for,
    with the ids in its path; None for a path the API does not have."""
    for wanted, pattern, name in ROUTES:
        found = pattern.match(rest)
        if found is not None and wanted == method:
            return name, found.groupdict()
    return None


@dataclass(frozen=True)
class Request:
    """One operation's inputs: its ids, its query and its body; ``host`` the address the client
    called (a log URL points back at it)."""

    params: Mapping[str, str]
    query: Mapping[str, str]
    body: bytes
    host: str

    @property
    def job(self) -> str:
        return self.params.get("job", "")

    @property
    def task(self) -> str:
        return self.params.get("task", "")

    def json(self) -> Any:
        try:
            return json.loads(self.body) if self.body else None
        except ValueError:
            raise errors.bad_request("the request body is not valid JSON") from None

    def integer(self, name: str, default: int) -> int:
        text = self.query.get(name)
        if text is None or text == "":
            return default
        try:
            return int(text)
        except ValueError:
            raise errors.bad_request(f"{name} must be an integer") from None


def answer(
    backend: ModelArtsBackend, signer: LogUrlSigner, name: str, request: Request
) -> tuple[int, Any]:
    """The status and JSON payload of operation ``name`` (None: no body)."""
    handlers: dict[str, Callable[[], tuple[int, Any]]] = {
        "create": lambda: (201, backend.create(request.json())),
        "search": lambda: (200, backend.search(request.json())),
        "names": lambda: (200, backend.name_check(request.query.get("job_name"))),
        "flavors": lambda: (200, backend.flavors(request.query.get("flavor_type"))),
        "engines": lambda: (200, backend.engines()),
        "show": lambda: (200, backend.show(request.job)),
        "update": lambda: (200, backend.update(request.job, request.json())),
        "delete": lambda: _deleted(backend, request.job),
        "terminate": lambda: (202, backend.terminate(request.job, request.json())),
        "tasks": lambda: (200, backend.tasks(request.job)),
        "preview": lambda: (200, backend.log_preview(request.job, request.task)),
        "log_url": lambda: (200, log_url(backend, signer, request)),
        "log_lines": lambda: (
            200,
            backend.log_lines(
                request.job,
                request.task,
                request.integer("base_line", 0),
                request.integer("lines", 500),
                request.query.get("order", "asc"),
            ),
        ),
        "events": lambda: (200, _events(backend, request)),
        "metrics": lambda: (200, backend.metrics(request.job, request.task)),
    }
    return handlers[name]()


def _deleted(backend: ModelArtsBackend, job: str) -> tuple[int, Any]:
    backend.delete(job)
    return 202, None


def _events(backend: ModelArtsBackend, request: Request) -> dict[str, Any]:
    query = request.query
    return backend.events(
        request.job,
        offset=request.integer("offset", 0),
        limit=request.integer("limit", 100),
        order=query.get("order", "asc"),
        level=query.get("level") or None,
        pattern=query.get("pattern") or None,
        start_time=query.get("start_time") or None,
        end_time=query.get("end_time") or None,
    )


def log_path(job: str, task: str) -> str:
    """Where the control plane serves a task's log."""
    return f"{CONTROL_PREFIX}logs/{job}/{task}"


def log_url(backend: ModelArtsBackend, signer: LogUrlSigner, request: Request) -> dict[str, str]:
    """A URL that serves the task's log to anyone who has it, for ``signer.valid_seconds``
    (as the service's presigned OBS URL)."""
    backend.log_file(request.job, request.task)
    content_type = request.query.get("Content-Type") or CONTENT_TYPES[0]
    if content_type not in CONTENT_TYPES:
        raise errors.bad_request(
            f"Content-Type {content_type!r} is not supported",
            f"use {' or '.join(CONTENT_TYPES)}",
        )
    resource = log_path(request.job, request.task)
    query = signer.query(resource, content_type)
    return {"obs_url": f"http://{request.host}{resource}?{query}"}

"""``RestTrainingService``: the ``TrainingService`` protocol on the official ModelArts client.

This is the only module that imports ``huaweicloudsdkcore`` and ``huaweicloudsdkmodelarts``,
and only when a service is opened. The v2 training-job operations live in the SDK's ``v1``
package (``ModelArtsClient.create_training_job`` is ``POST /v2/{project_id}/training-jobs``).

Two choices, both because the SDK's models lag behind the service:

- Request bodies are the plain dicts ``majob.compile.rest`` builds: the SDK serialises a dict
  as it is, so the wire body is exactly what ``majob submit --dry-run`` prints.
- Answers are read from the response's raw JSON, not from the SDK's model objects: its
  deserialiser silently drops keys it does not model, and its error handler drops
  ``error_solution`` (the remedy ModelArts gives); ``_SolutionHandler`` keeps it.

``service_error`` is the one mapping from an SDK or ``requests`` failure to the
``ServiceError`` tree; secrets are masked in every message. Idempotent calls (everything but
create) are retried on 429, 5xx and connection failures with exponential back-off, within
``timeout`` seconds in all. Create is never retried here: ``majob.service.submit`` looks the
job up by its submit id before sending it again.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import json
import logging
import re
import sys
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from tenacity import (
    Retrying,
    retry_if_exception,
    stop_after_attempt,
    stop_after_delay,
    wait_exponential,
    wait_random,
)

from majob.errors import (
    MajobError,
    ServiceAuthError,
    ServiceError,
    ServiceNotFound,
    ServiceUnreachable,
    UserInputError,
)
from majob.masking import Masker
from majob.service.base import (
    CREATE_LANDING_WINDOW,
    Engine,
    Event,
    Flavor,
    Job,
    JobFilter,
    LogChunk,
)
from majob.storage.config import Credentials

T = TypeVar("T")
INSTALL_HINT = "install the ModelArts extra: pip install 'majob[modelarts]'"
RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
#: Codes the gateway and IAM use for a refused signature or token (besides 401/403).
AUTH_CODES = frozenset({"APIGW.0301", "APIGW.0101", "APIGW.0303", "APIGW.0305"})
MAX_SEARCH_LIMIT = 50  # the service's page size limit (reference §2.2)


@dataclass(frozen=True)
class ServiceConfig:
    """How to reach a ModelArts endpoint and who we are to it."""

    endpoint: str
    project_id: str
    credentials: Credentials = field(repr=False)
    region: str | None = None
    emulated: bool = False
    timeout: float = 30.0  # seconds: bounds one call and the retries of an idempotent call
    connect_timeout: float = 5.0
    retries: int = 4
    # seconds a submit looks for a create whose answer was lost before sending it again
    create_wait: float = CREATE_LANDING_WINDOW


_IMPORT_LINE = re.compile(r"^from ([\w.]+) import (\w+)\s*$", re.MULTILINE)
_LAZY_PACKAGES = ("huaweicloudsdkmodelarts.v1", "huaweicloudsdkmodelarts.v1.model")


def _lazy_package(name: str) -> None:
    """Register package ``name`` with its names loaded on first use (PEP 562 ``__getattr__``).

    The SDK's ``v1`` and ``v1.model`` package ``__init__`` files import all ~1,280 model modules
    at once: about 0.5 s on an idle machine (1.4 s on a loaded one), most of what ``majob
    submit`` spends before its first request, for the twenty models majob touches. The lazy
    package reads the ``from <module> import <Name>`` lines of that ``__init__`` and imports a
    model's module when the name is first asked for (the client's deserialiser asks with
    ``hasattr``), so every name still resolves, as with the eager import.
    """
    if name in sys.modules:
        return
    spec = importlib.util.find_spec(name)
    if spec is None or spec.origin is None or spec.submodule_search_locations is None:
        return
    where = {
        attr: module for module, attr in _IMPORT_LINE.findall(Path(spec.origin).read_text("utf-8"))
    }
    package = importlib.util.module_from_spec(spec)

    def load(attr: str) -> Any:
        target = where.get(attr)
        if target is None:
            raise AttributeError(f"module {name!r} has no attribute {attr!r}")
        value = getattr(importlib.import_module(target), attr)
        setattr(package, attr, value)
        return value

    package.__getattr__ = load  # type: ignore[method-assign]
    sys.modules[name] = package
    parent, _, last = name.rpartition(".")
    setattr(sys.modules[parent], last, package)


def _import_sdk() -> tuple[Any, Any, Any]:
    try:
        from huaweicloudsdkcore.auth import credentials
        from huaweicloudsdkcore.http.http_config import HttpConfig

        for name in _LAZY_PACKAGES:
            _lazy_package(name)
        from huaweicloudsdkmodelarts import v1
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise UserInputError(
            "the ModelArts SDK (huaweicloudsdkmodelarts) is not installed", hint=INSTALL_HINT
        ) from error
    return credentials, HttpConfig, v1


@functools.cache
def _solution_handler_class() -> Any:
    """The SDK's default exception handler, plus the ``error_solution`` of the error body."""
    from huaweicloudsdkcore.exceptions.exception_handler import DefaultExceptionHandler
    from huaweicloudsdkcore.exceptions.exceptions import ServiceResponseException

    class SolutionHandler(DefaultExceptionHandler):  # type: ignore[misc]
        def handle_exception(self, request: Any, response: Any) -> None:
            try:
                super().handle_exception(request, response)
            except ServiceResponseException as error:
                try:
                    body = json.loads(response.text)
                except ValueError:
                    body = None
                solution = body.get("error_solution") if isinstance(body, dict) else None
                error.error_solution = str(solution) if solution else None
                raise

    return SolutionHandler


@functools.cache
def _silence_sdk_logger(client_class: type) -> None:
    """The SDK logs each failed try on a logger of its own (``ConnectionException occurred.
    ...``), which nothing handles, so logging's last resort writes it to stderr: raw, once per
    try, and quoting what failed unmasked. majob reports each failure itself, as one line."""
    sdk_logger = logging.getLogger(f"HuaweiCloud-SDK-{client_class.__name__}")
    sdk_logger.addHandler(logging.NullHandler())
    sdk_logger.propagate = False  # as the SDK sets it: an application's root handler gets none


def service_error(
    failure: BaseException, *, action: str, secrets: Sequence[str] = ()
) -> ServiceError:
    """The one mapping from an SDK (or ``requests``) failure to the ``ServiceError`` tree;
    ``secrets`` are masked in every message."""
    clean = Masker(secrets).text
    status = getattr(failure, "status_code", None)
    if isinstance(status, int):
        code = str(getattr(failure, "error_code", "") or "") or None
        if code == str(status):
            code = None  # the SDK puts the status there when the body had no code
        message = clean(str(getattr(failure, "error_msg", "") or f"HTTP {status}"))
        details: dict[str, Any] = {
            "code": code,
            "remedy": clean(str(getattr(failure, "error_solution", "") or "")) or None,
            "request_id": getattr(failure, "request_id", None) or None,
            "status": status,
        }
        text = f"{action}: {message}"
        if status == 404:
            return ServiceNotFound(text, **details)
        if status in (401, 403) or code in AUTH_CODES:
            return ServiceAuthError(
                text,
                hint="check the access key and secret key (HUAWEICLOUD_SDK_AK / "
                "HUAWEICLOUD_SDK_SK or the credentials file) and the profile's project_id",
                **details,
            )
        return ServiceError(text, **details)
    name = type(failure).__name__
    reason = clean(str(getattr(failure, "error_msg", "") or failure) or name)
    if "Timeout" in name or "timed out" in reason.lower():
        return ServiceUnreachable(
            f"{action}: ModelArts did not answer in time ({name})",
            hint="check the endpoint and the network, or raise MAJOB_MODELARTS_TIMEOUT",
        )
    if "Connection" in name or "HostUnreachable" in name or isinstance(failure, OSError):
        return ServiceUnreachable(
            f"{action}: cannot reach ModelArts ({_short(reason)})",
            hint="check the profile's endpoint or MAJOB_MODELARTS_ENDPOINT "
            "(for the emulator: is `majob emulator status` running?)",
        )
    return ServiceError(f"{action} failed: {name}: {_short(reason)}")


def _short(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def is_retryable(error: BaseException) -> bool:
    """Worth another try for an idempotent call: 429, 5xx, or the connection failed."""
    if isinstance(error, ServiceUnreachable):
        return True
    if isinstance(error, (ServiceAuthError, ServiceNotFound)):
        return False
    return isinstance(error, ServiceError) and (error.status or 0) in RETRYABLE_STATUS


def is_ambiguous(error: BaseException) -> bool:
    """A create that failed this way may still have made the job (the answer was lost)."""
    if isinstance(error, ServiceUnreachable):
        return True
    return isinstance(error, ServiceError) and (error.status or 0) in RETRYABLE_STATUS


class RestTrainingService:
    """``TrainingService`` over one ``ModelArtsClient`` (keep-alive, safe to use from threads)."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self._secrets = config.credentials.secrets()
        credentials, http_config, self._v1 = _import_sdk()
        creds = credentials.BasicCredentials(
            config.credentials.access_key, config.credentials.secret_key, config.project_id
        )
        if config.credentials.security_token:
            creds = creds.with_security_token(config.credentials.security_token)
        http = http_config.get_default_config()
        http.timeout = (config.connect_timeout, config.timeout)
        http.retry_times = 0  # ours, below: one policy for every call
        self._client = (
            self._v1.ModelArtsClient.new_builder()
            .with_credentials(creds)
            .with_endpoints([config.endpoint])
            .with_http_config(http)
            .with_exception_handler(_solution_handler_class()())
            .build()
        )
        _silence_sdk_logger(self._v1.ModelArtsClient)
        self._stop = stop_after_attempt(config.retries + 1) | stop_after_delay(config.timeout)

    # -- plumbing ----------------------------------------------------------------------------

    def _send(self, action: str, call: Callable[[], Any]) -> Any:
        """One SDK call; its failure mapped; its answer's JSON (None when it has no body)."""
        failure: Exception | None = None
        try:
            response = call()
        except MajobError:
            raise
        except Exception as error:  # the SDK raises its own, requests' and plain exceptions
            failure = error
        if failure is not None:
            # Raised outside the ``except``, chained to a masked stand-in: the SDK's exception
            # may quote a secret, and as a cause or context it would be in every traceback.
            raise service_error(failure, action=action, secrets=self._secrets) from Masker(
                self._secrets
            ).exception(failure)
        raw = getattr(response, "raw_content", None)
        if not raw:
            return None
        try:
            return json.loads(raw)
        except ValueError:
            raise ServiceError(f"{action}: the answer is not JSON: {_short(repr(raw))}") from None

    def _call(self, action: str, call: Callable[[], Any]) -> Any:
        """``_send``, retried with back-off while the failure is worth retrying."""
        for attempt in Retrying(
            stop=self._stop,
            wait=wait_exponential(multiplier=0.2, max=4.0) + wait_random(0, 0.2),
            retry=retry_if_exception(is_retryable),
            reraise=True,
        ):
            with attempt:
                return self._send(action, call)
        raise AssertionError("unreachable: tenacity re-raises the last error")  # pragma: no cover

    def _job(self, data: Any, action: str) -> Job:
        if not isinstance(data, Mapping) or not isinstance(data.get("metadata"), Mapping):
            raise ServiceError(f"{action}: the answer holds no job")
        return Job.from_wire(data, self)

    # -- the protocol ------------------------------------------------------------------------

    def create(self, body: Mapping[str, Any]) -> Job:
        request = self._v1.CreateTrainingJobRequest(body=dict(body))
        name = (body.get("metadata") or {}).get("name", "")
        action = f"create job {name!r}"
        return self._job(
            self._send(action, lambda: self._client.create_training_job(request)), action
        )

    def get(self, job_id: str) -> Job:
        request = self._v1.ShowTrainingJobDetailsRequest(training_job_id=job_id)
        action = f"show job {job_id}"
        data = self._call(action, lambda: self._client.show_training_job_details(request))
        return self._job(data, action)

    def search(
        self, where: JobFilter | None = None, *, offset: int = 0, limit: int = 50
    ) -> tuple[list[Job], int]:
        where = where or JobFilter()
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
        body: dict[str, Any] = {
            "offset": offset,
            "limit": max(1, min(limit, MAX_SEARCH_LIMIT)),
            "sort_by": "create_time",
            "order": "desc",
        }
        if filters:
            body["filters"] = filters
        request = self._v1.ListTrainingJobsRequest(body=body)
        data = self._call("list jobs", lambda: self._client.list_training_jobs(request)) or {}
        items = data.get("items") or []
        jobs = [Job.from_wire(item, self) for item in items if isinstance(item, Mapping)]
        # The filters are applied here too: a service that ignores one must not widen the list.
        jobs = [job for job in jobs if _matches(job, where)]
        total = data.get("total")
        return jobs, int(total) if isinstance(total, int) else len(jobs)

    def terminate(self, job_id: str) -> Job:
        request = self._v1.StopTrainingJobRequest(
            training_job_id=job_id, body={"action_type": "terminate"}
        )
        action = f"stop job {job_id}"
        data = self._call(action, lambda: self._client.stop_training_job(request))
        return self._job(data, action) if data else self.get(job_id)

    def delete(self, job_id: str) -> None:
        request = self._v1.DeleteTrainingJobRequest(training_job_id=job_id)
        self._call(f"delete job {job_id}", lambda: self._client.delete_training_job(request))

    def log_preview(self, job_id: str, task: str) -> str:
        request = self._v1.ShowTrainingJobLogsPreviewRequest(training_job_id=job_id, task_id=task)
        data = self._call(
            f"log of job {job_id} task {task}",
            lambda: self._client.show_training_job_logs_preview(request),
        )
        return str((data or {}).get("content") or "")

    def log_lines(self, job_id: str, task: str, base_line: int = 0, lines: int = 500) -> LogChunk:
        request = self._v1.ShowTrainingJobLogsFromAomRequest(
            training_job_id=job_id,
            task_id=task,
            base_line=str(base_line),
            lines=max(1, min(lines, 500)),
            order="asc",
        )
        data = self._call(
            f"log of job {job_id} task {task}",
            lambda: self._client.show_training_job_logs_from_aom(request),
        )
        data = data or {}
        content = str(data.get("content") or "")
        got = content.splitlines()
        try:
            end = int(str(data.get("end_line")))
        except ValueError:
            end = base_line + len(got)
        return LogChunk(task=task, lines=tuple(got), end_line=max(end, base_line))

    def events(self, job_id: str, *, limit: int = 100) -> list[Event]:
        request = self._v1.ListTrainingJobEventsRequest(
            training_job_id=job_id, limit=max(1, min(limit, 100)), order="asc"
        )
        data = self._call(
            f"events of job {job_id}", lambda: self._client.list_training_job_events(request)
        )
        return [
            Event(
                time=str(item.get("time", "")),
                level=str(item.get("level", "")),
                message=str(item.get("message", "")),
                source=str(item.get("source") or ""),
            )
            for item in (data or {}).get("events") or []
            if isinstance(item, Mapping)
        ]

    def flavors(self) -> list[Flavor]:
        request = self._v1.ShowTrainingJobFlavorsRequest()
        data = self._call("list flavors", lambda: self._client.show_training_job_flavors(request))
        return [Flavor.from_wire(item) for item in (data or {}).get("flavors") or []]

    def engines(self) -> list[Engine]:
        request = self._v1.ShowTrainingJobEnginesRequest()
        data = self._call("list engines", lambda: self._client.show_training_job_engines(request))
        return [Engine.from_wire(item) for item in (data or {}).get("items") or []]

    def close(self) -> None:
        http = self._client.get_http_client()
        if http is not None:
            http.close()
            http.executor.shutdown(wait=False)

    def __enter__(self) -> RestTrainingService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _matches(job: Job, where: JobFilter) -> bool:
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

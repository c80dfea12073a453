"""``RestTrainingService``: the ``TrainingService`` protocol on the official ModelArts client.

The SDK is loaded by ``service/modelarts_sdk.py`` (lazily, when a service is opened). The v2
training-job operations live in the SDK's ``v1`` package (``ModelArtsClient.create_training_job``
is ``POST /v2/{project_id}/training-jobs``).

Two choices, both because the SDK's models lag behind the service:

- Request bodies are the plain dicts ``majob.compile.rest`` builds: the SDK serialises a dict
  as it is, so the wire body is exactly what ``majob submit --dry-run`` prints.
- Answers are read from the response's raw JSON, not from the SDK's model objects: its
  deserialiser silently drops keys it does not model, and its error handler drops
  ``error_solution`` (the remedy ModelArts gives); ``modelarts_sdk.solution_handler_class``
  keeps it.

Failures become ``ServiceError``s in one place (``service/rest_failures.py``); secrets are masked
in every message. Idempotent calls (everything but create) are retried by the one retry loop
(``majob.retry``) on 429, 5xx and connection failures with exponential back-off, within
``timeout`` seconds in all. Create is never retried here: ``majob.service.submit`` looks the job
up by its submit id before sending it again.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from majob.errors import MajobError, ServiceError
from majob.masking import Masker
from majob.retry import call_retrying
from majob.service.base import CREATE_LANDING_WINDOW, Job, JobFilter
from majob.service.jobsearch import matches, search_body
from majob.service.logs import Event, LogChunk
from majob.service.modelarts_sdk import import_sdk, silence_sdk_logger, solution_handler_class
from majob.service.rest_failures import is_retryable, service_error, shortened
from majob.service.usage import read_usage
from majob.spec.catalog import Engine, Flavor
from majob.storage.config import Credentials


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


class RestTrainingService:
    """``TrainingService`` over one ``ModelArtsClient`` (keep-alive, safe to use from threads)."""

    def __init__(self, config: ServiceConfig) -> None:
        self.config = config
        self._secrets = config.credentials.secrets()
        credentials, http_config, self._v1 = import_sdk()
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
            .with_exception_handler(solution_handler_class()())
            .build()
        )
        silence_sdk_logger(self._v1.ModelArtsClient)

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
            text = shortened(repr(raw))
            raise ServiceError(f"{action}: the answer is not JSON: {text}") from None

    def _call(self, action: str, call: Callable[[], Any]) -> Any:
        """``_send``, retried with back-off while the failure is worth retrying."""
        return call_retrying(
            lambda: self._send(action, call),
            retry_if=is_retryable,
            retries=self.config.retries,
            timeout=self.config.timeout,
        )

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
        body = search_body(where, offset=offset, limit=limit)
        request = self._v1.ListTrainingJobsRequest(body=body)
        data = self._call("list jobs", lambda: self._client.list_training_jobs(request)) or {}
        items = data.get("items") or []
        jobs = [Job.from_wire(item, self) for item in items if isinstance(item, Mapping)]
        # The filters are applied here too: a service that ignores one must not widen the list.
        jobs = [job for job in jobs if matches(job, where)]
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

    def events(
        self, job_id: str, *, limit: int = 100, newest: bool = False, level: str | None = None
    ) -> list[Event]:
        request = self._v1.ListTrainingJobEventsRequest(
            training_job_id=job_id,
            limit=max(1, min(limit, 100)),
            order="desc" if newest else "asc",
            level=level,
        )
        data = self._call(
            f"events of job {job_id}", lambda: self._client.list_training_job_events(request)
        )
        items = [item for item in (data or {}).get("events") or [] if isinstance(item, Mapping)]
        if newest:
            items.reverse()  # asked newest first, to get the latest page: shown oldest first
        return [
            Event(
                time=str(item.get("time", "")),
                level=str(item.get("level", "")),
                message=str(item.get("message", "")),
                source=str(item.get("source") or ""),
            )
            for item in items
        ]

    def usage(self, job_id: str, task: str) -> dict[str, list[float]]:
        request = self._v1.ShowTrainingJobMetricsRequest(training_job_id=job_id, task_id=task)
        data = self._call(
            f"metrics of job {job_id} task {task}",
            lambda: self._client.show_training_job_metrics(request),
        )
        return read_usage(data)

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

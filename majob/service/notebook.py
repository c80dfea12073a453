"""``NotebookTrainingService``: the ``TrainingService`` protocol on the ModelArts notebook SDK.

In a ModelArts notebook the ``modelarts`` package is preinstalled (it is not on PyPI) and
``Session()`` takes its credentials from the notebook. There majob can run every job call
through the SDK's documented calls (reference §1.3; sdkreference ``_0422``-``_0428``):

========================  ======================================================================
create                    ``Estimator(session, ...).fit(inputs, wait=False, job_name)``, the
                          REST body turned into Estimator arguments (``compile/sdk_body.py``)
get                       ``Estimator(session=s, job_id=...).get_job_info()``
search                    ``Estimator.get_job_list(session, offset, limit, ..., filters)``
terminate / delete        ``.control_job()`` / ``Estimator.delete_job_by_id(session, job_id)``
log_preview / log_lines   ``.get_job_log(task_id=...)``: one preview of at most 5 MB per task,
                          lines counted in it (a log past 5 MB is seen only as the preview
                          shows it)
flavors                   ``Estimator.get_train_instance_types(session)``
engines                   the SDK has no engine list: the reference's engines
                          (``majob.spec.catalog.ENGINES``) stand in for pre-flight
events                    the SDK has no event list: none (``majob status`` shows no events)
========================  ======================================================================

Idempotent create: the Estimator has no argument for annotations, so the submit id travels in
the job's description, as ``[majob/submit-id=<id>]`` at its end (the description is cut to make
room: 256 characters in all). Jobs read back with that tag carry the id as their
``majob/submit-id`` annotation, so ``service/create.py`` finds a create whose answer was lost
exactly as on the REST backend. The limit: the tag is visible, and a job whose description was
edited afterwards (console, ``PUT``) is no longer recognised as this submit's.

It is chosen with ``MAJOB_BACKEND=notebook`` or a profile's ``backend: notebook``
(``service/connect.py``).
"""

from __future__ import annotations

import importlib
import importlib.util
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

from majob.compile.sdk import VOLUMES_NOT_IN_SDK, InputData, OutputData, TrainingFiles
from majob.compile.sdk_body import estimator_from_body
from majob.errors import MajobError, ServiceError, UserInputError
from majob.masking import Masker
from majob.service.base import (
    CREATE_LANDING_WINDOW,
    SUBMIT_ID_ANNOTATION,
    Job,
    JobFilter,
)
from majob.service.jobsearch import matches, search_body
from majob.service.logs import Event, LogChunk
from majob.service.notebook_failures import notebook_error, refusal
from majob.service.rest_failures import service_error
from majob.service.usage import read_usage
from majob.spec.catalog import ENGINES, Engine, Flavor

MAX_DESCRIPTION = 256
_TAG = re.compile(r"\s*\[majob/submit-id=([0-9a-f]+)\]$")


def notebook_sdk_available() -> bool:
    """True inside a ModelArts notebook (where ``import modelarts`` works)."""
    return importlib.util.find_spec("modelarts") is not None


def _sdk() -> tuple[Any, Any, Any]:
    try:
        session = importlib.import_module("modelarts.session")
        params = importlib.import_module("modelarts.train_params")
        estimator = importlib.import_module("modelarts.estimatorV2")
    except ImportError as error:
        raise UserInputError(
            "the ModelArts notebook SDK (modelarts) is not importable here",
            hint="it is preinstalled in ModelArts notebooks; elsewhere leave MAJOB_BACKEND "
            "unset (the REST backend)",
        ) from error
    return session, params, estimator


def tagged_description(description: str, submit_id: str) -> str:
    """``description`` with the submit id tag at its end, within 256 characters."""
    tag = f" [{SUBMIT_ID_ANNOTATION}={submit_id}]"
    return (description[: MAX_DESCRIPTION - len(tag)] + tag).strip()


def description_tag(description: str) -> str | None:
    """The submit id a description was tagged with, if any."""
    found = _TAG.search(description)
    return found.group(1) if found else None


def _built(value: Any, params: Any) -> Any:
    """An ``EstimatorCall`` value with its SDK records turned into ``train_params`` objects."""
    if isinstance(value, (TrainingFiles, InputData, OutputData)):
        return getattr(params, value.sdk_class)(**value.kwargs())
    if isinstance(value, list):
        return [_built(item, params) for item in value]
    if isinstance(value, dict):
        return {key: _built(item, params) for key, item in value.items()}
    return value


class NotebookTrainingService:
    """``TrainingService`` over the notebook SDK; ``session`` defaults to ``Session()``."""

    def __init__(
        self,
        session: Any = None,
        masker: Masker | None = None,
        *,
        create_wait: float = CREATE_LANDING_WINDOW,
    ) -> None:
        # Seconds a submit looks for a create whose answer was lost (MAJOB_MODELARTS_CREATE_WAIT)
        self.create_wait = create_wait
        session_module, self._params, module = _sdk()
        self._estimator = module.Estimator
        self.session = session if session is not None else session_module.Session()
        self._masker = masker or Masker()

    # -- plumbing ----------------------------------------------------------------------------

    def _send(self, action: str, call: Callable[[], Any]) -> Any:
        failure: Exception | None = None
        try:
            answer = call()
        except MajobError:
            raise
        except Exception as error:  # the SDK raises its own, undocumented exceptions
            failure = error
        if failure is None and isinstance(answer, Mapping):
            refused = refusal(answer)
            if refused is None:
                return answer
            raise service_error(refused, action=action, secrets=tuple(self._masker.values))
        if failure is not None:
            # Raised outside the ``except``, chained to a masked copy: the SDK's message may
            # quote what it was sent (a secret of the job's), and a traceback shows the chain.
            mapped = notebook_error(failure, action=action, secrets=tuple(self._masker.values))
            raise mapped from self._masker.exception(failure)
        return answer

    def _job_object(self, job_id: str) -> Any:
        return self._estimator(session=self.session, job_id=job_id)

    def _job(self, data: Any, action: str) -> Job:
        if not isinstance(data, Mapping) or not isinstance(data.get("metadata"), Mapping):
            raise ServiceError(f"{action}: the answer holds no job")
        job = Job.from_wire(data, self)
        submit_id = description_tag(str(data["metadata"].get("description") or ""))
        if submit_id and not job.submit_id:
            job = replace(job, annotations={**job.annotations, SUBMIT_ID_ANNOTATION: submit_id})
        return job

    def unsaid(self, body: Mapping[str, Any]) -> list[str]:
        """What of ``body`` the Estimator cannot carry (its auto_stop, an input's access
        method...), for the submit to say; the submit id is carried, in the description."""
        notes = estimator_from_body(body).notes
        return [n for n in notes if SUBMIT_ID_ANNOTATION not in n]

    # -- the protocol ------------------------------------------------------------------------

    def create(self, body: Mapping[str, Any]) -> Job:
        if (body.get("spec") or {}).get("volumes"):  # dropped, the job would miss its data
            raise UserInputError(
                "this job mounts SFS Turbo volumes, which the notebook SDK cannot submit",
                hint=VOLUMES_NOT_IN_SDK,
            )
        metadata = dict(body.get("metadata") or {})
        submit_id = (metadata.get("annotations") or {}).get(SUBMIT_ID_ANNOTATION)
        if submit_id:
            metadata["description"] = tagged_description(
                str(metadata.get("description") or ""), str(submit_id)
            )
        call = estimator_from_body({**body, "metadata": metadata})
        action = f"create job {call.job_name!r} through the notebook SDK"
        estimator_args = {k: _built(v, self._params) for k, v in call.estimator.items()}
        fit_args = {k: _built(v, self._params) for k, v in call.fit.items()}

        def fit() -> Any:
            return self._estimator(session=self.session, **estimator_args).fit(**fit_args)

        created = self._send(action, fit)
        return self.get(str(created.job_id))

    def get(self, job_id: str) -> Job:
        action = f"show job {job_id}"
        return self._job(self._send(action, self._job_object(job_id).get_job_info), action)

    def search(
        self, where: JobFilter | None = None, *, offset: int = 0, limit: int = 50
    ) -> tuple[list[Job], int]:
        where = where or JobFilter()
        body = search_body(where, offset=offset, limit=limit)
        data = self._send(
            "list jobs", lambda: self._estimator.get_job_list(session=self.session, **body)
        )
        items = [item for item in (data or {}).get("items") or [] if isinstance(item, Mapping)]
        jobs = [self._job(item, "list jobs") for item in items]
        jobs = [job for job in jobs if matches(job, where)]
        total = (data or {}).get("total")
        return jobs, int(total) if isinstance(total, int) else len(jobs)

    def terminate(self, job_id: str) -> Job:
        action = f"stop job {job_id}"
        data = self._send(action, self._job_object(job_id).control_job)
        return self._job(data, action) if data else self.get(job_id)

    def delete(self, job_id: str) -> None:
        self._send(
            f"delete job {job_id}",
            lambda: self._estimator.delete_job_by_id(session=self.session, job_id=job_id),
        )

    def log_preview(self, job_id: str, task: str) -> str:
        data = self._send(
            f"log of job {job_id} task {task}",
            lambda: self._job_object(job_id).get_job_log(task_id=task),
        )
        if isinstance(data, Mapping):
            return str(data.get("content") or "")
        return str(data or "")

    def log_lines(self, job_id: str, task: str, base_line: int = 0, lines: int = 500) -> LogChunk:
        got = self.log_preview(job_id, task).splitlines()[base_line : base_line + max(1, lines)]
        return LogChunk(task=task, lines=tuple(got), end_line=base_line + len(got))

    def usage(self, job_id: str, task: str) -> dict[str, list[float]]:
        data = self._send(
            f"metrics of job {job_id} task {task}",
            lambda: self._job_object(job_id).get_job_metrics(task_id=task),
        )
        return read_usage(data)

    def events(
        self, job_id: str, *, limit: int = 100, newest: bool = False, level: str | None = None
    ) -> list[Event]:
        return []  # the notebook SDK has no event call (see the module docstring)

    def flavors(self) -> list[Flavor]:
        data = self._send(
            "list flavors", lambda: self._estimator.get_train_instance_types(session=self.session)
        )
        items = data.get("flavors") if isinstance(data, Mapping) else data
        return [Flavor.from_wire(item) for item in items or [] if isinstance(item, Mapping)]

    def engines(self) -> list[Engine]:
        return list(ENGINES)

    def close(self) -> None:
        pass  # the SDK holds no connection of majob's to close

    def __enter__(self) -> NotebookTrainingService:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

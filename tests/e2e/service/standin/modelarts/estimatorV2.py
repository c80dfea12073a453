"""``modelarts.estimatorV2``: ``Estimator`` and ``JOB_STATE`` (reference §1.3; sdkreference
``_0422``-``_0428``).

``Estimator(session, ...)`` describes a job; ``fit(inputs, wait, job_name, show_log)`` creates it
and returns the job object, an ``Estimator`` bound to the new ``job_id`` (what
``Estimator(session=s, job_id=...)`` gives too). On a job object: ``get_job_info()`` (the REST
job JSON), ``get_job_log(task_id="worker-0")`` (the log preview JSON, ``content`` first),
``get_job_metrics(task_id)``, ``control_job()`` (terminate), ``delete_job()``. Class methods:
``get_job_list``, ``get_train_instance_types``, ``delete_job_by_id``, ``control_job_by_id``.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from huaweicloudsdkmodelarts.v1 import model

from modelarts._body import channel, code_part, engine_part, resource_part, rest_path
from modelarts._client import APIException, build_client, call
from modelarts.session import Session
from modelarts.train_params import InputData, OutputData, TrainingFiles

#: The old (V1) job status codes, which public code reads through this name (reference §1.4)
#: [U: what the V2 module's constant holds is undocumented; V2 jobs report ``status.phase``].
JOB_STATE = {
    0: "JOBSTAT_UNKNOWN",
    1: "JOBSTAT_INIT",
    2: "JOBSTAT_IMAGE_CREATING",
    3: "JOBSTAT_IMAGE_FAILED",
    4: "JOBSTAT_SUBMIT_TRYING",
    5: "JOBSTAT_SUBMIT_FAILED",
    6: "JOBSTAT_DELETE_FAILED",
    7: "JOBSTAT_WAITING",
    8: "JOBSTAT_RUNNING",
    9: "JOBSTAT_KILLING",
    10: "JOBSTAT_COMPLETED",
    11: "JOBSTAT_FAILED",
    12: "JOBSTAT_KILLED",
    13: "JOBSTAT_CANCELED",
    14: "JOBSTAT_LOST",
}
TERMINAL_PHASES = ("Completed", "Failed", "Terminated", "Abnormal")


def _client(session: Session) -> Any:
    """The session's client (one per endpoint and keys: a test may repoint a session)."""
    key = (
        session.modelarts_endpoint,
        session.access_key,
        session.secret_key,
        session.project_id,
        session.security_token,
    )
    cached = session.__dict__.get("_modelarts_client")
    if cached is None or cached[0] != key:
        cached = (key, build_client(*key))
        session.__dict__["_modelarts_client"] = cached
    return cached[1]


class Estimator:
    #: Seconds between two looks at a job ``fit(wait=True)`` waits for (public code: 10).
    poll_seconds = 0.2

    def __init__(
        self,
        session: Session,
        training_files: TrainingFiles | None = None,
        outputs: list[OutputData] | None = None,
        parameters: list[dict[str, Any]] | None = None,
        framework_type: str | None = None,
        framework_version: str | None = None,
        train_instance_type: str | None = None,
        train_instance_count: int = 1,
        log_url: str | None = None,
        env_variables: dict[str, str] | None = None,
        working_dir: str | None = None,
        job_description: str | None = None,
        user_image_url: str | None = None,
        user_command: str | None = None,
        local_code_dir: str | None = None,
        pool_id: str | None = None,
        job_id: str | None = None,
    ) -> None:
        if not isinstance(session, Session):
            raise TypeError("session must be a modelarts.session.Session")
        self.session = session
        self.training_files = training_files
        self.outputs = outputs or []
        self.parameters = parameters or []
        self.framework_type = framework_type
        self.framework_version = framework_version
        self.train_instance_type = train_instance_type
        self.train_instance_count = train_instance_count
        self.log_url = log_url
        self.env_variables = env_variables or {}
        self.working_dir = working_dir
        self.job_description = job_description
        self.user_image_url = user_image_url
        self.user_command = user_command
        self.local_code_dir = local_code_dir
        self.pool_id = pool_id
        self.job_id = job_id

    # -- create ------------------------------------------------------------------------------

    def _algorithm(self, inputs: list[InputData]) -> dict[str, Any]:
        algorithm = code_part(self.training_files, self.user_image_url)
        if self.user_command:
            algorithm["command"] = self.user_command
        if self.local_code_dir:
            algorithm["local_code_dir"] = self.local_code_dir
        if self.working_dir:
            algorithm["working_dir"] = self.working_dir
        algorithm["engine"] = engine_part(
            self.framework_type, self.framework_version, self.user_image_url
        )
        algorithm["parameters"] = [
            {"name": p["name"], "value": str(p["value"])} for p in self.parameters
        ]
        algorithm["inputs"] = [
            channel(i, None if i.is_local_source else i.local_path) for i in inputs
        ]
        algorithm["outputs"] = [channel(o, o.local_path) for o in self.outputs]
        algorithm["environments"] = dict(self.env_variables)
        return algorithm

    def _body(self, inputs: list[InputData], job_name: str) -> dict[str, Any]:
        spec: dict[str, Any] = {
            "resource": resource_part(
                self.train_instance_type, self.train_instance_count, self.pool_id
            )
        }
        if self.log_url:
            spec["log_export_path"] = {"obs_url": rest_path(self.log_url)}
        metadata: dict[str, Any] = {"name": job_name}
        if self.job_description:
            metadata["description"] = self.job_description
        return {
            "kind": "job",
            "metadata": metadata,
            "algorithm": self._algorithm(inputs),
            "spec": spec,
        }

    def _upload_local_sources(self, inputs: list[InputData]) -> None:
        files = self.training_files
        if files is not None and not files.code_dir.startswith("obs://") and files.obs_path:
            self.session.obs.copy(files.code_dir, files.obs_path, keep_last_dir=False)
        for item in inputs:
            if item.is_local_source:
                assert item.local_path is not None
                self.session.obs.copy(item.local_path, item.obs_path, keep_last_dir=False)

    def fit(
        self,
        inputs: list[InputData] | None = None,
        wait: bool = False,
        job_name: str | None = None,
        show_log: bool = False,
    ) -> Estimator:
        """Create the job; with ``wait``, return once it ended (its log printed as it grows with
        ``show_log``)."""
        if not job_name:
            raise ValueError("fit needs a job_name")
        inputs = inputs or []
        self._upload_local_sources(inputs)
        request = model.CreateTrainingJobRequest(body=self._body(inputs, job_name))
        created = call(lambda: _client(self.session).create_training_job(request))
        job = self._attached(str(created["metadata"]["id"]))
        if wait:
            job._wait(show_log)
        return job

    def _attached(self, job_id: str) -> Estimator:
        job = Estimator(self.session, job_id=job_id)
        job.train_instance_count = self.train_instance_count
        return job

    def _wait(self, show_log: bool) -> None:
        shown = 0
        while True:
            phase = self.get_job_info()["status"]["phase"]
            if show_log:
                content = self._log_so_far()
                sys.stdout.write(content[shown:])
                shown = max(shown, len(content))
            if phase in TERMINAL_PHASES:
                return
            time.sleep(self.poll_seconds)

    def _log_so_far(self) -> str:
        """The log preview's content; empty while the service says it is not ready (2776)."""
        try:
            return str(self.get_job_log().get("content") or "")
        except APIException as error:
            if error.body.get("error_code") == "ModelArts.2776":
                return ""
            raise

    # -- one job -----------------------------------------------------------------------------

    def _id(self) -> str:
        if not self.job_id:
            raise ValueError("this Estimator has no job: fit() it or give job_id")
        return self.job_id

    def get_job_info(self) -> dict[str, Any]:
        request = model.ShowTrainingJobDetailsRequest(training_job_id=self._id())
        return dict(call(lambda: _client(self.session).show_training_job_details(request)))

    def get_job_log(self, task_id: str = "worker-0") -> dict[str, Any]:
        request = model.ShowTrainingJobLogsPreviewRequest(
            training_job_id=self._id(), task_id=task_id
        )
        answer = call(lambda: _client(self.session).show_training_job_logs_preview(request))
        return dict(answer or {"content": "", "current_size": 0, "full_size": 0})

    def get_job_metrics(self, task_id: str = "worker-0") -> dict[str, Any]:
        request = model.ShowTrainingJobMetricsRequest(training_job_id=self._id(), task_id=task_id)
        return dict(call(lambda: _client(self.session).show_training_job_metrics(request)))

    def control_job(self) -> dict[str, Any]:
        """Terminate the job (Creating, Pending or Running jobs only)."""
        request = model.StopTrainingJobRequest(
            training_job_id=self._id(), body={"action_type": "terminate"}
        )
        return dict(call(lambda: _client(self.session).stop_training_job(request)) or {})

    def delete_job(self) -> None:
        request = model.DeleteTrainingJobRequest(training_job_id=self._id())
        call(lambda: _client(self.session).delete_training_job(request))

    # -- class methods -----------------------------------------------------------------------

    @classmethod
    def get_job_list(
        cls,
        session: Session,
        offset: int = 0,
        limit: int = 10,
        sort_by: str = "create_time",
        order: str = "desc",
        group_by: str | None = None,
        filters: list[dict[str, Any]] | None = None,
    ) -> dict[str, Any]:
        body: dict[str, Any] = {"offset": offset, "limit": limit, "sort_by": sort_by}
        body["order"] = order
        if group_by:
            body["group_by"] = group_by
        if filters:
            body["filters"] = filters
        request = model.ListTrainingJobsRequest(body=body)
        return dict(call(lambda: _client(session).list_training_jobs(request)))

    @classmethod
    def get_train_instance_types(cls, session: Session) -> list[dict[str, Any]]:
        """The flavors, as the flavor list serves them [U: the real return shape]."""
        request = model.ShowTrainingJobFlavorsRequest()
        answer = call(lambda: _client(session).show_training_job_flavors(request))
        return list(answer.get("flavors") or [])

    @classmethod
    def delete_job_by_id(cls, session: Session, job_id: str) -> None:
        cls(session, job_id=job_id).delete_job()

    @classmethod
    def control_job_by_id(cls, session: Session, job_id: str) -> dict[str, Any]:
        return cls(session, job_id=job_id).control_job()

"""``modelarts.estimatorV2.Estimator`` (reference §1.3), forwarding to the emulated REST API."""

from __future__ import annotations

import re
from typing import Any

from majob.service.rest import RestTrainingService, ServiceConfig
from majob.storage.config import Credentials
from modelarts.session import Session
from modelarts.train_params import InputData, OutputData, TrainingFiles

JOB_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _rest_path(uri: str) -> str:
    if not uri.startswith("obs://"):
        raise ValueError(f"expected an obs:// path, got {uri!r}")
    return "/" + uri[len("obs://") :]


class _Job:
    def __init__(self, job_id: str) -> None:
        self.job_id = job_id


class Estimator:
    def __init__(
        self,
        session: Session,
        training_files: TrainingFiles | None = None,
        outputs: list[OutputData] | None = None,
        parameters: list[dict[str, Any]] | None = None,
        framework_type: str | None = None,
        framework_version: str | None = None,
        train_instance_type: str | None = None,
        train_instance_count: int | None = None,
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
        self.pool_id = pool_id

    def _body(self, inputs: list[InputData], job_name: str) -> dict[str, Any]:
        assert self.training_files is not None
        code_dir = _rest_path(self.training_files.code_dir)
        algorithm: dict[str, Any] = {"code_dir": code_dir}
        if self.user_image_url:
            algorithm["command"] = self.user_command
            algorithm["engine"] = {"image_url": self.user_image_url}
        else:
            algorithm["boot_file"] = code_dir + str(self.training_files.boot_file)
            algorithm["engine"] = {
                "engine_name": self.framework_type,
                "engine_version": self.framework_version,
            }
        if self.working_dir:
            algorithm["working_dir"] = self.working_dir
        algorithm["parameters"] = [
            {"name": p["name"], "value": str(p["value"])} for p in self.parameters
        ]
        algorithm["inputs"] = [
            {"name": i.name, "remote": {"obs": {"obs_url": _rest_path(i.obs_path)}}} for i in inputs
        ]
        algorithm["outputs"] = [
            {"name": o.name, "remote": {"obs": {"obs_url": _rest_path(o.obs_path)}}}
            for o in self.outputs
        ]
        algorithm["environments"] = dict(self.env_variables)
        resource: dict[str, Any] = {
            "flavor_id": self.train_instance_type,
            "node_count": self.train_instance_count or 1,
        }
        spec: dict[str, Any] = {"resource": resource}
        if self.log_url:
            spec["log_export_path"] = {"obs_url": _rest_path(self.log_url)}
        metadata: dict[str, Any] = {"name": job_name}
        if self.job_description:
            metadata["description"] = self.job_description
        return {"kind": "job", "metadata": metadata, "algorithm": algorithm, "spec": spec}

    def fit(
        self, inputs: list[InputData] | None = None, wait: bool = False, job_name: str | None = None
    ) -> _Job:
        if job_name is None or not JOB_NAME.match(job_name):
            raise ValueError("job_name must be 1-64 of A-Z a-z 0-9 _ -")
        config = ServiceConfig(
            endpoint=self.session.modelarts_endpoint,
            project_id=str(self.session.project_id),
            credentials=Credentials(str(self.session.access_key), str(self.session.secret_key)),
        )
        with RestTrainingService(config) as service:
            job = service.create(self._body(inputs or [], job_name))
        return _Job(job.id)

"""A scripted in-memory ``TrainingService`` for the unit tests of submit, logs and pre-flight.

It is a test double of the seam only (jobs are dicts, failures are scripted per call); the
end-to-end tests drive the real client against the emulated ModelArts instead.
"""

from __future__ import annotations

import itertools
import time
from collections.abc import Callable, Mapping
from typing import Any

import pytest

from majob.errors import ServiceError, ServiceNotFound
from majob.service.base import Job, JobFilter
from majob.service.logs import Event, LogChunk
from majob.spec.catalog import Engine, Flavor


class ScriptedService:
    def __init__(self) -> None:
        self.jobs: dict[str, dict[str, Any]] = {}
        self.logs: dict[tuple[str, str], list[str]] = {}
        self.job_events: dict[str, list[Event]] = {}
        self.create_calls = 0
        # Per-call scripts: a callable run before the call's work ("before") or after it
        # ("after"); it may raise to simulate the service's answer being an error.
        self.before_create: list[Callable[[], None]] = []
        self.after_create: list[Callable[[], None]] = []
        self.search_failures: list[ServiceError] = []
        self.before_search: list[Callable[[], None]] = []  # one per search call, in order
        self.offered_flavors = [
            Flavor("modelarts.vm.cpu.2u", type="CPU", max_num=1),
            Flavor("modelarts.vm.cpu.8u", type="CPU", max_num=16),
            Flavor("modelarts.bm.snt9.xlarge.8", type="Ascend", max_num=8, npu="8"),
        ]
        self.offered_engines = [
            Engine("PyTorch", "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"),
            Engine(
                "Ascend-Powered-Engine", "mindspore_1.6.0-cann_5.0.3.6-py_3.7-euler_2.8.3-aarch64"
            ),
        ]
        self._ids = itertools.count(1)

    def add_job(self, name: str, phase: str = "Running", **annotations: str) -> str:
        job_id = f"00000000-0000-0000-0000-{next(self._ids):012d}"
        self.jobs[job_id] = {
            "metadata": {
                "id": job_id,
                "name": name,
                "create_time": int(time.time() * 1000),
                "annotations": dict(annotations),
            },
            "status": {"phase": phase, "tasks": ["worker-0"]},
        }
        return job_id

    def create(self, body: Mapping[str, Any]) -> Job:
        self.create_calls += 1
        if self.before_create:
            self.before_create.pop(0)()
        metadata = body["metadata"]
        job_id = self.add_job(metadata["name"], "Creating", **metadata.get("annotations", {}))
        if self.after_create:
            self.after_create.pop(0)()
        return Job.from_wire(self.jobs[job_id], self)

    def get(self, job_id: str) -> Job:
        if job_id not in self.jobs:
            raise ServiceNotFound(f"no job {job_id}", status=404)
        return Job.from_wire(self.jobs[job_id], self)

    def search(
        self, where: JobFilter | None = None, *, offset: int = 0, limit: int = 50
    ) -> tuple[list[Job], int]:
        if self.before_search:
            self.before_search.pop(0)()
        if self.search_failures:
            raise self.search_failures.pop(0)
        where = where or JobFilter()
        jobs = [Job.from_wire(data, self) for data in self.jobs.values()]
        jobs = [
            j
            for j in jobs
            if (not where.name or where.name in j.name)
            and (not where.phases or j.phase in where.phases)
        ]
        return jobs[offset : offset + limit], len(jobs)

    def terminate(self, job_id: str) -> Job:
        self.jobs[job_id]["status"]["phase"] = "Terminated"
        return self.get(job_id)

    def delete(self, job_id: str) -> None:
        self.jobs.pop(job_id)

    def log_preview(self, job_id: str, task: str) -> str:
        return "\n".join(self.logs.get((job_id, task), []))

    def log_lines(self, job_id: str, task: str, base_line: int = 0, lines: int = 500) -> LogChunk:
        content = self.logs.get((job_id, task), [])
        got = content[base_line : base_line + lines]
        return LogChunk(task, tuple(got), base_line + len(got))

    def events(
        self, job_id: str, *, limit: int = 100, newest: bool = False, level: str | None = None
    ) -> list[Event]:
        chosen = [e for e in self.job_events.get(job_id, []) if level in (None, e.level)]
        return chosen[-limit:] if newest else chosen[:limit]

    def flavors(self) -> list[Flavor]:
        return list(self.offered_flavors)

    def engines(self) -> list[Engine]:
        return list(self.offered_engines)

    def close(self) -> None:
        pass


@pytest.fixture
def service() -> ScriptedService:
    return ScriptedService()

"""The fake ModelArts's backend (moto-style): state and rules, no HTTP.

``ModelArtsBackend`` answers each v2 training-job operation of reference modelarts.md §2.2 with
plain data shaped like the service's JSON, or raises ``ModelArtsError`` with its documented code.
Jobs live in ``JobStore`` (sqlite) and run in ``JobRun`` threads. Opening a state dir whose jobs
were active when the last emulator died marks them ``Abnormal`` (as a lost node does).
"""

from __future__ import annotations

import re
import shutil
import threading
import uuid
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from majob import container
from majob.emulator.modelarts import errors
from majob.emulator.modelarts.errors import ModelArtsError, bad_request, job_not_found
from majob.emulator.modelarts.executor import ACTIVE, JobFault, JobRun, kill_leftovers
from majob.emulator.modelarts.loglines import LineIndex, tail
from majob.emulator.modelarts.plan import JobPlan, check_body
from majob.emulator.modelarts.storage import JobStorage
from majob.emulator.modelarts.store import JobRecord, JobStore, now_ms
from majob.masking import MASK
from majob.runner.local import resolve_interpreter
from majob.service.catalog import ENGINES, FLAVORS, find_flavor

TERMINABLE = ("Creating", "Pending", "Running")
PREVIEW_LIMIT = 5 * 1024 * 1024  # the preview returns at most the last 5 MB
METRICS = ("cpuUsage", "memUsage", "gpuUtil", "gpuMemUsage", "npuUtil", "npuMemUsage")
USER_NAME = "majob-emulator"


class ModelArtsBackend:
    """All the fake's state and rules. ``storage`` is the fake OBS the jobs read and write
    (None: create checks no OBS paths and jobs that need OBS fail)."""

    def __init__(
        self,
        state_dir: Path,
        *,
        storage: JobStorage | None,
        python: str | None = None,
        upload_period: float = 30.0,
    ) -> None:
        self.store = JobStore(state_dir)
        self.storage = storage
        self.python = resolve_interpreter(python)
        self.upload_period = upload_period
        self._lock = threading.RLock()
        self._runs: dict[str, JobRun] = {}
        # Each job's create body as sent, for as long as this emulator runs; the state dir gets
        # it with the job's values masked (``at_rest``).
        self._bodies: dict[str, dict[str, Any]] = {}
        self._job_faults: list[JobFault] = []
        self._line_indexes: dict[tuple[str, str], LineIndex] = {}
        self.recovered = self._recover()

    # -- restart and shutdown -----------------------------------------------------------------

    def _recover(self) -> list[str]:
        """Jobs left active by an emulator that died: their processes are gone (or are killed
        now) and they become Abnormal, with an event saying why."""
        stale = self.store.with_phases(ACTIVE)
        kill_leftovers({job.id: job.pids for job in stale})
        for job in stale:
            self.store.add_event(
                job.id,
                f"the emulator stopped while the job was {job.phase}; its processes were lost",
                "Error",
            )
            self.store.update(job.id, phase="Abnormal", secondary_phase="Lost", end_time=now_ms())
        return [job.id for job in stale]

    def close(self) -> None:
        """Stop every running job (they end Abnormal) and close the database."""
        with self._lock:
            runs = list(self._runs.values())
        for run in runs:
            run.shutdown()
        for run in runs:
            run.join(timeout=30)
        self.store.close()

    # -- job faults ---------------------------------------------------------------------------

    def add_job_fault(self, fault: JobFault) -> JobFault:
        with self._lock:
            self._job_faults.append(fault)
        return fault

    def clear_job_faults(self) -> None:
        with self._lock:
            self._job_faults.clear()

    @property
    def job_faults(self) -> list[JobFault]:
        with self._lock:
            return list(self._job_faults)

    def _pick_fault(self, name: str) -> JobFault | None:
        with self._lock:
            for fault in self._job_faults:
                if fault.count is not None and fault.fired >= fault.count:
                    continue
                if fault.name is not None and re.search(fault.name, name) is None:
                    continue
                fault.fired += 1
                return fault
        return None

    # -- operations ---------------------------------------------------------------------------

    def create(self, body: Any) -> dict[str, Any]:
        plan = check_body(body, self.storage)
        with self._lock:
            for other in self.store.with_phases(ACTIVE):
                if other.name == plan.name:
                    raise ModelArtsError(
                        400,
                        errors.DUPLICATE_NAME,
                        f"the job name {plan.name} is already used by training job {other.id} "
                        f"({other.phase})",
                        "choose another name, or wait until that job ends",
                    )
            job = JobRecord(
                id=str(uuid.uuid4()),
                name=plan.name,
                description=body.get("metadata", {}).get("description") or "",
                phase="Creating",
                secondary_phase="Creating",
                create_time=now_ms(),
                start_time=None,
                end_time=None,
                body=at_rest(body),
                annotations=dict(body.get("metadata", {}).get("annotations") or {}),
            )
            self.store.insert(job)
            self._bodies[job.id] = body
            self.store.add_event(job.id, f"the training job {job.name} was created")
            run = JobRun(
                self.store,
                _NoStorage() if self.storage is None else self.storage,
                job.id,
                plan,
                fault=self._pick_fault(plan.name),
                python=self.python,
                upload_period=self.upload_period,
                on_exit=self._forget,
            )
            self._runs[job.id] = run
        run.start()
        return self.render(job, plan)

    def phase_counts(self) -> dict[str, int]:
        """How many jobs are in each phase (for ``majob emulator status``)."""
        counts: dict[str, int] = {}
        for job in self.store.all():
            counts[job.phase] = counts.get(job.phase, 0) + 1
        return counts

    def _forget(self, job_id: str) -> None:
        with self._lock:
            self._runs.pop(job_id, None)

    def job(self, job_id: str) -> JobRecord:
        job = self.store.get(job_id)
        if job is None:
            raise job_not_found(job_id)
        return job

    def show(self, job_id: str) -> dict[str, Any]:
        return self.render(self.job(job_id))

    def search(self, body: Any) -> dict[str, Any]:
        if body is None:
            body = {}
        if not isinstance(body, dict):
            raise bad_request("the search body must be a JSON object")
        offset, limit = body.get("offset", 0), body.get("limit", 10)
        if not isinstance(offset, int) or offset < 0:
            raise bad_request("offset must be an integer >= 0")
        if not isinstance(limit, int) or not 1 <= limit <= 50:
            raise bad_request("limit must be an integer from 1 to 50")
        order = body.get("order", "desc")
        if order not in ("asc", "desc"):
            raise bad_request("order must be 'asc' or 'desc'")
        sort_by = body.get("sort_by", "create_time")
        if sort_by not in ("create_time", "name", "duration"):
            raise bad_request(f"sort_by {sort_by!r} is not supported")
        jobs = [j for j in self.store.all() if _matches(j, body.get("filters") or [])]
        key: Callable[[JobRecord], Any] = {
            "create_time": lambda j: j.create_time,
            "name": lambda j: j.name,
            "duration": _duration,
        }[sort_by]
        jobs.sort(key=key, reverse=order == "desc")
        page = jobs[offset : offset + limit]
        return {
            "total": len(jobs),
            "count": len(page),
            "limit": limit,
            "offset": offset,
            "sort_by": sort_by,
            "order": order,
            "group_by": body.get("group_by", ""),
            "workspace_id": body.get("workspace_id", "0"),
            "items": [self.render(j) for j in page],
        }

    def update(self, job_id: str, body: Any) -> dict[str, Any]:
        self.job(job_id)
        description = body.get("description") if isinstance(body, dict) else None
        if not isinstance(description, str) or len(description) > 256:
            raise bad_request("description must be a string of at most 256 characters")
        self.store.update(job_id, description=description)
        return {}

    def terminate(self, job_id: str, body: Any) -> dict[str, Any]:
        job = self.job(job_id)
        action = body.get("action_type") if isinstance(body, dict) else None
        if action != "terminate":
            raise bad_request(f"action_type {action!r} is not supported", "send 'terminate'")
        if not self.store.transition(
            job_id, TERMINABLE, phase="Terminating", secondary_phase="Terminating"
        ):
            raise ModelArtsError(
                400,
                errors.BAD_STATE,
                f"training job {job_id} is {job.phase}; only Creating, Pending or Running jobs "
                "can be terminated",
            )
        self.store.add_event(job_id, "the job is terminating (asked by the user)")
        with self._lock:
            run = self._runs.get(job_id)
        if run is not None:
            run.terminate()
        else:
            self.store.update(job_id, phase="Terminated", secondary_phase="Terminated")
        return self.show(job_id)

    def delete(self, job_id: str) -> None:
        self.job(job_id)
        with self._lock:
            run = self._runs.get(job_id)
        if run is not None:
            self.store.transition(job_id, TERMINABLE, phase="Terminating")
            run.terminate()
            run.join(timeout=30)
        self.store.delete(job_id)
        with self._lock:
            for task in [t for j, t in self._line_indexes if j == job_id]:
                del self._line_indexes[job_id, task]
        self._bodies.pop(job_id, None)
        shutil.rmtree(self.store.job_dir(job_id), ignore_errors=True)

    def tasks(self, job_id: str) -> list[dict[str, Any]]:
        job = self.job(job_id)
        return [
            {"task": task, "ip": "127.0.0.1", "host_ip": "127.0.0.1", "schedule_count": 0}
            for task in job.tasks
        ]

    def _log(self, job_id: str, task: str) -> Path:
        job = self.job(job_id)
        if task not in job.tasks:
            raise ModelArtsError(
                404,
                errors.NOT_FOUND,
                f"training job {job_id} has no task {task}",
                f"tasks: {', '.join(job.tasks)}",
            )
        return self.store.log_path(job_id, task)

    def log_preview(self, job_id: str, task: str) -> dict[str, Any]:
        shown, size = tail(self._log(job_id, task), PREVIEW_LIMIT)
        return {
            "content": shown.decode("utf-8", errors="replace"),
            "current_size": len(shown),
            "full_size": size,
        }

    def _line_index(self, job_id: str, task: str) -> LineIndex:
        path = self._log(job_id, task)
        with self._lock:
            return self._line_indexes.setdefault((job_id, task), LineIndex(path))

    def log_lines(
        self, job_id: str, task: str, base_line: int, lines: int, order: str
    ) -> dict[str, Any]:
        """Complete lines after ``base_line`` (the number of the last line the client has;
        lines count from 1), at most ``lines``. ``order=desc`` with ``base_line=0`` gives the
        last ``lines`` lines. Line numbers are strings, as the SDK's model types them."""
        if not 1 <= lines <= 500:
            raise bad_request("lines must be from 1 to 500")
        if base_line < 0:
            raise bad_request("base_line must be >= 0")
        if order not in ("asc", "desc"):
            raise bad_request("order must be 'asc' or 'desc'")
        # Only complete lines: a line still being written is returned once it ends.
        index = self._line_index(job_id, task)
        if order == "asc":
            start = base_line
            chosen = index.lines(start, lines)
        else:
            end = base_line - 1 if base_line else index.count()
            start = max(0, end - lines)
            chosen = index.lines(start, end - start)
        return {
            "start_line": str(start + 1 if chosen else base_line),
            "end_line": str(start + len(chosen) if chosen else base_line),
            "lines": len(chosen),
            "content": "".join(line + "\n" for line in chosen),
        }

    def log_file(self, job_id: str, task: str) -> Path:
        return self._log(job_id, task)

    def events(
        self,
        job_id: str,
        *,
        offset: int = 0,
        limit: int = 100,
        order: str = "asc",
        level: str | None = None,
        pattern: str | None = None,
    ) -> dict[str, Any]:
        self.job(job_id)
        if not 1 <= limit <= 100 or offset < 0:
            raise bad_request("limit must be from 1 to 100 and offset >= 0")
        events = [
            e
            for e in self.store.events(job_id)
            if (level is None or e.level == level) and (not pattern or pattern in e.message)
        ]
        if order == "desc":
            events.reverse()
        page = events[offset : offset + limit]
        return {
            "total": len(events),
            "limit": limit,
            "offset": offset,
            "order": order,
            "events": [
                {
                    "time": _iso(e.time),
                    "level": e.level,
                    "message": e.message,
                    "source": e.source,
                }
                for e in page
            ],
        }

    def metrics(self, job_id: str, task: str) -> dict[str, Any]:
        """Per-minute samples; the emulator measures none, so each is -1 (n/a, as documented)."""
        job = self.job(job_id)
        if task not in job.tasks:
            raise ModelArtsError(404, errors.NOT_FOUND, f"training job {job_id} has no task {task}")
        minutes = max(1, _duration(job) // 60000 + 1) if job.start_time else 0
        return {"metrics": [{"metric": name, "value": [-1.0] * minutes} for name in METRICS]}

    @staticmethod
    def flavors(flavor_type: str | None) -> dict[str, Any]:
        if flavor_type not in (None, "", "CPU", "GPU", "Ascend"):
            raise bad_request(f"flavor_type {flavor_type!r} is invalid", "use CPU, GPU or Ascend")
        chosen = [f.to_api() for f in FLAVORS if not flavor_type or f.flavor_type == flavor_type]
        return {"total_count": len(chosen), "flavors": chosen}

    @staticmethod
    def engines() -> dict[str, Any]:
        return {"total": len(ENGINES), "items": [e.to_api() for e in ENGINES]}

    # -- rendering ----------------------------------------------------------------------------

    def render(self, job: JobRecord, plan: JobPlan | None = None) -> dict[str, Any]:
        """The ``Job`` JSON the service returns from create/show/terminate and in searches."""
        body = self._bodies.get(job.id, job.body)
        algorithm = dict(body.get("algorithm") or {})
        environments = algorithm.get("environments")
        algorithm["environments"] = (
            [environments] if isinstance(environments, dict) else environments or []
        )
        for kind, base in (
            ("inputs", container.MOUNT / "inputs"),
            ("outputs", container.MOUNT / "outputs"),
        ):
            channels = []
            for channel in algorithm.get(kind) or []:
                resolved = {"local_dir": str(base / f"{channel.get('name')}_0"), **channel}
                if kind == "outputs":
                    resolved.setdefault("mode", "upload_periodically")
                    resolved.setdefault("period", int(self.upload_period))
                channels.append(resolved)
            algorithm[kind] = channels
        spec = dict(body.get("spec") or {})
        resource = dict(spec.get("resource") or {})
        flavor = find_flavor(str(resource.get("flavor_id")))
        resource.setdefault("node_count", 1)
        resource["policy"] = "regular"
        if flavor is not None:
            api = flavor.to_api()
            resource["flavor_name"] = flavor.flavor_name
            resource["flavor_detail"] = {
                "flavor_type": api["flavor_type"],
                "billing": api["billing"],
                "flavor_info": api["flavor_info"],
            }
        spec["resource"] = resource
        annotations = {"job_template": "Template DL", "key_task": "worker", **job.annotations}
        status: dict[str, Any] = {
            "phase": job.phase,
            "secondary_phase": job.secondary_phase,
            "duration": _duration(job),
            "tasks": job.tasks if job.start_time else [],
            "task_statuses": job.task_statuses,
        }
        if job.start_time:
            status["start_time"] = job.start_time
            status["node_count_metrics"] = [[job.start_time, job.node_count]]
        return {
            "kind": body.get("kind", "job"),
            "metadata": {
                "id": job.id,
                "name": job.name,
                "description": job.description,
                "workspace_id": body.get("metadata", {}).get("workspace_id", "0"),
                "create_time": job.create_time,
                "user_name": USER_NAME,
                "annotations": annotations,
            },
            "status": status,
            "algorithm": algorithm,
            "spec": spec,
        }


class _NoStorage:
    """Without a fake OBS nothing can be downloaded: the job fails with that reason."""

    def exists(self, uri: Any) -> bool:
        return False

    def download(self, uri: Any, target: Path) -> int:
        raise RuntimeError("the emulator has no OBS to download from")

    def upload_tree(self, source: Path, uri: Any) -> int:
        raise RuntimeError("the emulator has no OBS to upload to")

    def upload_file(self, source: Path, uri: Any, content_type: str | None = None) -> None:
        raise RuntimeError("the emulator has no OBS to upload to")


def _duration(job: JobRecord) -> int:
    if not job.start_time:
        return 0
    return (job.end_time or now_ms()) - job.start_time


def _iso(ms: int) -> str:
    moment = datetime.fromtimestamp(ms / 1000, timezone.utc)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ms % 1000:03d}Z"


def at_rest(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the state dir keeps it: each env and hyperparameter value is ``***``.

    They are how a job gets a token, and the state dir is a plain directory on the user's disk
    (the cloud keeps them on its side). After a restart, a job's details show ``***`` for them;
    nothing else reads them then: a job that was running when the emulator stopped is lost."""
    algorithm = body.get("algorithm")
    if not isinstance(algorithm, dict):
        return body
    kept = dict(algorithm)
    environments = algorithm.get("environments")
    if isinstance(environments, dict):  # a map, or a list of maps (as responses echo it)
        kept["environments"] = {name: MASK for name in environments}
    elif isinstance(environments, list):
        kept["environments"] = [
            {name: MASK for name in item} if isinstance(item, dict) else item
            for item in environments
        ]
    parameters = algorithm.get("parameters")
    if isinstance(parameters, list):
        kept["parameters"] = [
            {**item, "value": MASK} if isinstance(item, dict) and "value" in item else item
            for item in parameters
        ]
    return {**body, "algorithm": kept}


def _matches(job: JobRecord, filters: Any) -> bool:
    if not isinstance(filters, list):
        raise bad_request("filters must be a list of {key, operator, value}")
    for item in filters:
        if not isinstance(item, dict):
            raise bad_request("each filter must be an object {key, operator, value}")
        key, operator, values = item.get("key"), item.get("operator"), item.get("value")
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise bad_request(f"filter {key}: value must be a list of strings")
        if key == "name":
            field = job.name
        elif key == "phase":
            field = job.phase
        elif key == "create_time":
            field = str(job.create_time)
        else:
            raise bad_request(f"filter key {key!r} is not supported by the emulator")
        if operator == "like":
            ok = any(v.lower() in field.lower() for v in values)
        elif operator == "in":
            ok = field in values
        elif operator == "not":
            ok = field not in values
        elif operator == "between":
            if key != "create_time" or len(values) != 2:
                raise bad_request("between takes create_time and two values [start, end] (ms)")
            try:
                ok = int(values[0]) <= job.create_time <= int(values[1])
            except ValueError:
                raise bad_request("between takes two times in ms since the epoch") from None
        else:
            raise bad_request(
                f"filter operator {operator!r} is invalid", "use between, like, in, not"
            )
        if not ok:
            return False
    return True

"""The fake ModelArts's backend (moto-style): state and rules, no HTTP.

``ModelArtsBackend`` answers each v2 training-job operation of reference modelarts.md §2.2 with
plain data shaped like the service's JSON, or raises ``ModelArtsError`` with its documented code.
Jobs live in ``JobStore`` (sqlite) and run in ``JobRun`` threads. Opening a state dir whose jobs
were active when the last emulator died marks them ``Abnormal`` (as a lost node does).
"""

from __future__ import annotations

import shutil
import signal
import threading
import uuid
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from majob.emulator.modelarts import catalog, errors
from majob.emulator.modelarts.errors import ModelArtsError, bad_request, job_not_found
from majob.emulator.modelarts.events import events_page
from majob.emulator.modelarts.executor import ACTIVE, USAGE_FILE, JobRun
from majob.emulator.modelarts.jobfaults import JobFaults
from majob.emulator.modelarts.loglines import LineIndex, tail
from majob.emulator.modelarts.plan import NAME, check_body
from majob.emulator.modelarts.render import at_rest, job_duration, render_job
from majob.emulator.modelarts.search import search_jobs
from majob.emulator.modelarts.storage import JobStorage, NoStorage
from majob.emulator.modelarts.store import JobRecord, JobStore, now_ms
from majob.emulator.modelarts.usage import METRICS, NOT_AVAILABLE, saved_series
from majob.processes import ProcessRef, signal_if_ours
from majob.runner.host import resolve_interpreter

TERMINABLE = ("Creating", "Pending", "Running")
NOT_STARTED = ("Creating", "Pending")  # no container yet: no log
PREVIEW_LIMIT = 5 * 1024 * 1024  # the preview returns at most the last 5 MB
FLAVOR_TYPES = ("CPU", "GPU", "Ascend")
# Seconds a node may print nothing and use no CPU before the job is taken as hung (an injected
# hang fault gives its own, short window): ModelArts watches over several detection periods.
HANG_WINDOW = 600.0


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
        hang_window: float = HANG_WINDOW,
    ) -> None:
        self.store = JobStore(state_dir)
        self.hang_window = hang_window
        self.storage = storage
        self.python = resolve_interpreter(python)
        self.upload_period = upload_period
        self._lock = threading.RLock()
        self._runs: dict[str, JobRun] = {}
        # Each job's create body as sent, for as long as this emulator runs; the state dir gets
        # it with the job's values masked (``at_rest``).
        self._bodies: dict[str, dict[str, Any]] = {}
        self.job_faults = JobFaults()
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

    # -- operations ---------------------------------------------------------------------------

    def create(self, body: Any) -> dict[str, Any]:
        plan = check_body(body, self.storage)
        with self._lock:
            # A name is taken while any job has it, ended or not: the API reference of
            # ValidateTrainingJobName (GET /v2/{project_id}/training-job-names) says a job is
            # created only when its name does not exist yet. Deleting the job frees the name.
            for other in self.store.named(plan.name):
                raise ModelArtsError(
                    400,
                    errors.DUPLICATE_NAME,
                    f"the job name {plan.name} is already used by training job {other.id} "
                    f"({other.phase})",
                    "choose another name, or delete that job",
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
                NoStorage() if self.storage is None else self.storage,
                job.id,
                plan,
                fault=self.job_faults.pick(plan.name),
                python=self.python,
                upload_period=self.upload_period,
                hang_window=self.hang_window,
                on_exit=self._forget,
            )
            self._runs[job.id] = run
        run.start()
        return self.render(job)

    def name_check(self, job_name: Any) -> dict[str, bool]:
        """``GET /training-job-names``: whether a job (in any phase) has the name."""
        if not isinstance(job_name, str) or not NAME.match(job_name):
            raise bad_request(
                "job_name must be 1-64 letters, digits, '_' and '-'", "pass ?job_name=<name>"
            )
        return {"is_duplicate": bool(self.store.named(job_name))}

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
        return search_jobs(self.store.all(), body, self.render)

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
        path = self._log(job_id, task)
        job = self.job(job_id)
        if job.phase in NOT_STARTED and not path.exists():
            # No container yet, so no log: the documented "log not ready" (HTTP 204).
            raise ModelArtsError(
                204,
                errors.LOG_NOT_READY,
                f"the log of {task} is not ready: training job {job_id} is {job.phase}",
                "read the log once the job is Running",
            )
        shown, size = tail(path, PREVIEW_LIMIT)
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

    def events(self, job_id: str, **query: Any) -> dict[str, Any]:
        """A page of the job's events (``events.py`` reads the query)."""
        self.job(job_id)
        return events_page(self.store.events(job_id), **query)

    def metrics(self, job_id: str, task: str) -> dict[str, Any]:
        """Per-minute averages of what the task's processes used (``usage.py``): measured while
        the job runs, kept when it ends; ``-1`` (n/a, as documented) for what is not measured."""
        job = self.job(job_id)
        if task not in job.tasks:
            raise ModelArtsError(404, errors.NOT_FOUND, f"training job {job_id} has no task {task}")
        with self._lock:
            run = self._runs.get(job_id)
        node = job.tasks.index(task)
        series = run.usage.series(node) if run is not None else None
        if series is None:
            series = saved_series(self.store.job_dir(job_id) / USAGE_FILE, task)
        if series is None:  # never ran, or ran under an emulator that kept no measures
            minutes = max(1, job_duration(job) // 60000 + 1) if job.start_time else 0
            series = {name: [NOT_AVAILABLE] * minutes for name in METRICS}
        return {"metrics": [{"metric": name, "value": series.get(name, [])} for name in METRICS]}

    @staticmethod
    def flavors(flavor_type: str | None) -> dict[str, Any]:
        if flavor_type not in (None, "", *FLAVOR_TYPES):
            raise bad_request(f"flavor_type {flavor_type!r} is invalid", "use CPU, GPU or Ascend")
        chosen = [
            dict(f.item)
            for f in catalog.flavors()
            if not flavor_type or f.flavor_type == flavor_type
        ]
        return {"total_count": len(chosen), "flavors": chosen}

    @staticmethod
    def engines() -> dict[str, Any]:
        engines = catalog.engines()
        return {"total": len(engines), "items": [dict(e.item) for e in engines]}

    def render(self, job: JobRecord) -> dict[str, Any]:
        """The ``Job`` JSON of create/show/terminate and searches; while this emulator runs, with
        the body as it was sent (the state dir keeps it masked)."""
        return render_job(job, self._bodies.get(job.id, job.body), self.upload_period)


def kill_leftovers(processes: Mapping[str, Sequence[ProcessRef]]) -> None:
    """Kill the process groups a crashed emulator left behind (by job id): only a group whose
    leader is still the process the record names; its pid may be another process's by now."""
    for group in processes.values():
        for leader in group:
            signal_if_ours(leader, signal.SIGKILL, group=True)

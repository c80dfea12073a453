"""The one narrow seam between majob and a training service, and the values it speaks in.

``TrainingService`` is what submit, the job commands and the Python API use; ``service/rest.py``
implements it on the official ``huaweicloudsdkmodelarts`` client (against ModelArts or the
emulator). Every method raises a ``ServiceError`` subclass on failure.

The values (``Job``, ``Flavor``, ``Engine``, ``Event``, ``LogChunk``) are frozen and
backend-neutral; ``Job.from_wire`` reads the REST v2 job JSON (reference §2.4). A ``Job`` that
came from a service keeps a reference to it, so ``job.refresh()``, ``job.wait()``,
``job.logs()`` and ``job.stop()`` work on what ``majob.submit`` returns.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any, Protocol

from majob import display
from majob.service.logs import Event, LogChunk, iter_logs
from majob.service.restarts import RunEnd, read_run_ends, restarts_summary
from majob.service.watch import WaitResult, wait_for

# Flavor and Engine are the catalogue's types (spec/catalog.py): what a service lists and what
# the reference documents are read into one type each.
from majob.spec.catalog import Engine, Flavor
from majob.text import counted

if TYPE_CHECKING:
    from majob.masking import Masker

#: The phases of reference §2.4. A job in a terminal phase never changes again.
PHASES = (
    "Creating",
    "Pending",
    "Running",
    "Failed",
    "Completed",
    "Terminating",
    "Terminated",
    "Abnormal",
)
TERMINAL_PHASES = frozenset({"Completed", "Failed", "Terminated", "Abnormal"})
ACTIVE_PHASES = frozenset({"Creating", "Pending", "Running", "Terminating"})
SUBMIT_ID_ANNOTATION = "majob/submit-id"
# Seconds after a create was sent that it may still land though its answer was lost: Huawei
# Cloud's API Gateway gives up on a backend after at most 60 s unless configured otherwise.
CREATE_LANDING_WINDOW = 60.0


@dataclass(frozen=True)
class TaskStatus:
    """How one task (``worker-0``...) ended, when it has."""

    task: str
    exit_code: int | None
    message: str = ""


@dataclass(frozen=True)
class Job:
    """A training job as the service last described it. Times are epoch milliseconds."""

    id: str
    name: str
    phase: str
    secondary_phase: str = ""
    tasks: tuple[str, ...] = ()
    task_statuses: tuple[TaskStatus, ...] = ()
    duration_ms: int = 0
    start_time: int | None = None
    create_time: int | None = None
    annotations: Mapping[str, str] = field(default_factory=dict)
    flavor: str = ""
    node_count: int = 1
    # runs that ended early (faults, hangs), and what ModelArts did: ``status.running_records``
    run_ends: tuple[RunEnd, ...] = ()
    service: TrainingService | None = field(default=None, repr=False, compare=False)

    @classmethod
    def from_wire(cls, data: Mapping[str, Any], service: TrainingService | None = None) -> Job:
        """Read a REST v2 job (create/show/terminate answer, or a search item)."""
        metadata = data.get("metadata") or {}
        status = data.get("status") or {}
        resource = (data.get("spec") or {}).get("resource") or {}
        statuses = tuple(
            TaskStatus(
                task=str(item.get("task", "")),
                exit_code=_int_or_none(item.get("exit_code")),
                message=str(item.get("message") or ""),
            )
            for item in status.get("task_statuses") or ()
        )
        return cls(
            id=str(metadata.get("id", "")),
            name=str(metadata.get("name", "")),
            phase=str(status.get("phase") or "Creating"),
            secondary_phase=str(status.get("secondary_phase") or ""),
            tasks=tuple(str(t) for t in status.get("tasks") or ()),
            task_statuses=statuses,
            duration_ms=_int_or_none(status.get("duration")) or 0,
            start_time=_int_or_none(status.get("start_time")),
            create_time=_int_or_none(metadata.get("create_time")),
            annotations={str(k): str(v) for k, v in (metadata.get("annotations") or {}).items()},
            flavor=str(resource.get("flavor_id") or ""),
            node_count=_int_or_none(resource.get("node_count")) or 1,
            run_ends=read_run_ends(status.get("running_records")),
            service=service,
        )

    @property
    def finished(self) -> bool:
        return self.phase in TERMINAL_PHASES

    @property
    def succeeded(self) -> bool:
        return self.phase == "Completed"

    @property
    def phase_label(self) -> str:
        """``Running``, or ``Failed (ImagePullFailed)`` when the secondary phase says more."""
        extra = f" ({self.secondary_phase})" if self.secondary_phase not in ("", self.phase) else ""
        return f"{self.phase}{extra}"

    @property
    def restarts(self) -> tuple[RunEnd, ...]:
        """The runs ModelArts restarted the job after (each a fault it recovered from)."""
        return tuple(end for end in self.run_ends if end.restarted)

    def restarts_text(self) -> str:
        """``2 restarts: worker-1 (node_fault): ...``; ``''`` when it never restarted."""
        return restarts_summary(self.run_ends)

    @property
    def submit_id(self) -> str | None:
        return self.annotations.get(SUBMIT_ID_ANNOTATION)

    def failed_task(self) -> TaskStatus | None:
        """The first task that exited non-zero, if one did."""
        return next((t for t in self.task_statuses if t.exit_code not in (None, 0)), None)

    def task_names(self) -> tuple[str, ...]:
        """The job's tasks; before the service lists them, ``worker-0..n-1`` by node count."""
        return self.tasks or tuple(f"worker-{i}" for i in range(self.node_count))

    # -- the handle side: what majob.submit's caller does with the job ------------------------

    def _bound(self) -> TrainingService:
        if self.service is None:
            raise RuntimeError(f"job {self.id} is not bound to a service")
        return self.service

    def refresh(self) -> Job:
        """The job as the service describes it now; this handle is updated too."""
        return self._adopt(self._bound().get(self.id))

    def _adopt(self, current: Job) -> Job:
        """Take ``current``'s state into this handle; the handle.

        A ``Job`` is a value, but the one ``majob.submit`` returns is also the user's handle on
        the job: after ``job.wait()``, ``print(job)`` and the notebook card must not say
        Creating for a job that completed. So the wait and ``refresh`` write the state they read
        into it; nothing else changes a ``Job`` once made (hence ``object.__setattr__``)."""
        for name in self.__dataclass_fields__:
            if name not in ("id", "service"):
                object.__setattr__(self, name, getattr(current, name))
        return self

    def stop(self) -> Job:
        """Terminate the job (Creating, Pending or Running jobs only)."""
        return self._bound().terminate(self.id)

    def wait(
        self,
        *,
        timeout: float | None = None,
        on_update: Callable[[Job], None] | None = None,
        on_line: Callable[[str], None] | None = None,
        on_poll: Callable[[Job], None] | None = None,
        on_event: Callable[[Event], None] | None = None,
        masker: Masker | None = None,
    ) -> WaitResult[Job]:
        """Poll until the job ends; ``on_line`` sees its log lines (``[worker-i]`` prefixed),
        each secret of ``masker`` shown as ``***``; ``on_update`` each phase change, ``on_poll``
        the job as each poll read it, ``on_event`` each warning event (``may be hung``) once.
        This handle ends up as the job ended (the result's ``job`` is this handle)."""
        waited = wait_for(
            lambda: self._bound(),
            self.id,
            job_name=self.name,
            timeout=timeout,
            on_update=on_update,
            on_line=on_line,
            on_poll=on_poll,
            on_event=on_event,
            masker=masker,
        )
        waited.job = self._adopt(waited.job)
        return waited

    def logs(self, *, task: str | None = None, follow: bool = False) -> Iterator[str]:
        """The job's log lines, all tasks merged with ``[worker-i]`` prefixes unless ``task``
        is given; ``follow`` keeps reading until the job ends."""
        return iter_logs(self._bound(), self.id, task=task, follow=follow)

    def usage(self) -> dict[str, dict[str, list[float]]]:
        """What each task used, as the service measured it: ``{task: {metric: [per-minute
        values]}}`` (``cpuUsage``, ``memUsage``, ...; ``-1``: not measured)."""
        service = self._bound()
        return {task: service.usage(self.id, task) for task in self.task_names()}

    def with_service(self, service: TrainingService) -> Job:
        return replace(self, service=service)

    # -- in a notebook: drawn by majob.notebook, through majob.display ------------------------

    def metrics(self, definitions: Mapping[str, str] | None = None, *, usage: bool = False) -> Any:
        """The metric series per node (a pandas DataFrame when pandas is installed, else a
        mapping): as the pipeline recorded them, or read from the log with ``definitions``;
        with ``usage``, the service's measured ``cpuUsage`` and ``memUsage`` beside them."""
        return display.metrics(self, definitions, usage=usage)

    def plot(self, metric: str | None = None, definitions: Mapping[str, str] | None = None) -> Any:
        """Draw the metric series with matplotlib (``pip install 'majob[plot]'``)."""
        return display.plot(self, metric, definitions)

    def __repr__(self) -> str:
        return (
            f"<Job {self.name} {self.phase} {display.seconds(self.duration_ms / 1000)}, "
            f"{counted(self.node_count, 'node')}, id {self.id}>"
        )

    def _repr_html_(self) -> str | None:
        return display.html(self)


class JobList(list[Job]):
    """Jobs, newest first (``majob.jobs()``): a list that reads as a short text table, and in a
    notebook as an HTML one (drawn by ``majob.notebook``)."""

    def __repr__(self) -> str:
        lines = [f"<{counted(len(self), 'job')}, newest first>"]
        lines += [
            f"  {job.id[:8]} {job.name} {job.phase_label} {display.seconds(job.duration_ms / 1000)}"
            for job in self
        ]
        return "\n".join(lines)

    def _repr_html_(self) -> str | None:
        return display.html(self)


def _int_or_none(value: object) -> int | None:
    if value is None or value == "":
        return None
    try:
        return int(str(value))
    except ValueError:
        return None


@dataclass(frozen=True)
class JobFilter:
    """What ``search`` narrows the list to; ``None`` means any."""

    name: str | None = None  # a substring ("like")
    phases: Sequence[str] | None = None
    created_after: int | None = None  # epoch ms
    created_before: int | None = None


class TrainingService(Protocol):
    """A ModelArts-shaped training service. ``body`` is a REST v2 create body (a dict)."""

    def create(self, body: Mapping[str, Any]) -> Job: ...

    def get(self, job_id: str) -> Job: ...

    def search(
        self, where: JobFilter | None = None, *, offset: int = 0, limit: int = 50
    ) -> tuple[list[Job], int]:
        """One page of jobs, newest first, and the total count matching."""
        ...

    def terminate(self, job_id: str) -> Job: ...

    def delete(self, job_id: str) -> None: ...

    def log_preview(self, job_id: str, task: str) -> str: ...

    def log_lines(self, job_id: str, task: str, base_line: int = 0, lines: int = 500) -> LogChunk:
        """Up to ``lines`` lines of ``task``'s log after line ``base_line`` (0: from the
        start)."""
        ...

    def events(
        self, job_id: str, *, limit: int = 100, newest: bool = False, level: str | None = None
    ) -> list[Event]:
        """Up to ``limit`` (at most 100) of the job's events, oldest first: its first ones, or
        with ``newest`` its latest; ``level`` keeps one level (``Warning``)."""
        ...

    def usage(self, job_id: str, task: str) -> dict[str, list[float]]:
        """What ``task``'s processes used, per minute, by metric (``cpuUsage``, ``memUsage``,
        ...: percentages; ``-1`` where the service measured nothing)."""
        ...

    def flavors(self) -> list[Flavor]: ...

    def engines(self) -> list[Engine]: ...

    def close(self) -> None: ...

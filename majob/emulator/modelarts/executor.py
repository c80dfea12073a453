"""Runs an emulated training job for real: the lifecycle thread of one job.

``JobRun`` walks a job through Creating → Pending → Running → Completed/Failed (or Terminating →
Terminated when stopped, Abnormal when the emulator shuts down under it). In Running it builds
the container under ``<state>/jobs/<id>/ma-user`` with the runner's layout functions (the same
paths, environment and arguments as the local stage), downloads the code and inputs from the
fake OBS, starts one process per node (its own session, output appended to the task's log),
uploads the outputs and exports the logs every ``upload_period`` seconds and at the end, and sets
the phase from the exit codes. No step waits on a clock except an injected slow phase.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import IO

from majob.emulator.modelarts.plan import JobPlan
from majob.emulator.modelarts.storage import JobStorage
from majob.emulator.modelarts.store import JobStore, now_ms
from majob.migrate.standin import npu_standin_for
from majob.processes import ProcessRef, signal_if_ours
from majob.runner.layout import ContainerPaths, container_paths, node_command
from majob.runner.local import free_port
from majob.spec.models import JobSpec
from majob.text import counted

ACTIVE = ("Creating", "Pending", "Running", "Terminating")
TERMINAL = ("Completed", "Failed", "Terminated", "Abnormal")
SERVICE = "[ModelArts Service Log]"
POLL_SECONDS = 0.02
STOP_GRACE_SECONDS = 3.0
# A container has none of these: launcher variables (a stale RANK would mislead a script) and
# this machine's cloud credentials and majob settings.
_DROPPED_ENV = {"RANK", "LOCAL_RANK", "WORLD_SIZE", "LOCAL_WORLD_SIZE", "GROUP_RANK",
                "MASTER_ADDR", "MASTER_PORT", "TORCHELASTIC_RUN_ID"}  # fmt: skip
_DROPPED_PREFIXES = ("HUAWEICLOUD_SDK_", "MAJOB_")


@dataclass
class JobFault:
    """An injected job fault: jobs whose name matches ``name`` (a regex; None: every job) fail
    at ``fail_at`` (Creating, Pending or Running) and/or spend ``delays[phase]`` seconds in a
    phase. ``count`` jobs at most (None: no limit)."""

    name: str | None = None
    fail_at: str | None = None
    delays: dict[str, float] = field(default_factory=dict)
    count: int | None = None
    fired: int = 0

    def __post_init__(self) -> None:
        if self.fail_at not in (None, "Creating", "Pending", "Running"):
            raise ValueError("fail_at must be Creating, Pending or Running")
        if not self.fail_at and not self.delays:
            raise ValueError("a job fault needs fail_at or delays")
        for phase, seconds in self.delays.items():
            if phase not in ("Creating", "Pending", "Running") or seconds < 0:
                raise ValueError("delays map Creating/Pending/Running to seconds >= 0")


class _Stopped(Exception):
    """The job was asked to stop while it waited."""


class JobRun(threading.Thread):
    """The lifecycle of one job, in a thread of its own."""

    def __init__(
        self,
        store: JobStore,
        storage: JobStorage,
        job_id: str,
        plan: JobPlan,
        *,
        fault: JobFault | None = None,
        python: str,
        upload_period: float = 30.0,
        on_exit: Callable[[str], None] | None = None,
    ) -> None:
        super().__init__(name=f"job-{job_id[:8]}", daemon=True)
        self.store = store
        self.storage = storage
        self.job_id = job_id
        self.plan = plan
        self.fault = fault
        self.python = python
        self.upload_period = upload_period
        self._on_exit = on_exit
        self._stop_event = threading.Event()
        self._shutdown = False
        self._processes: list[subprocess.Popen[bytes]] = []
        self._logs: list[IO[bytes]] = []
        self._paths: ContainerPaths | None = None

    # -- control from other threads -----------------------------------------------------------

    def terminate(self) -> None:
        """Stop the job (the phase is already Terminating)."""
        self._stop_event.set()

    def shutdown(self) -> None:
        """The emulator is stopping: stop the processes, leave the job Abnormal."""
        self._shutdown = True
        self._stop_event.set()

    # -- the lifecycle ------------------------------------------------------------------------

    def run(self) -> None:
        try:
            self._lifecycle()
        except _Stopped:
            self._finish_stopped()
        except Exception as error:  # the job cannot run: say why in its events, as the service does
            self._stop_processes()
            self.store.add_event(self.job_id, f"the job failed: {error}", "Error")
            self._set_final("Failed", "Failed")
        finally:
            for log in self._logs:
                log.close()
            if self._on_exit is not None:
                self._on_exit(self.job_id)

    def _lifecycle(self) -> None:
        self._phase_delay("Creating")
        if self._fails_at("Creating"):
            self.store.add_event(
                self.job_id, "injected fault: the job failed while creating", "Error"
            )
            self._set_final("Failed", "CreateFailed")
            return
        self._move(("Creating",), "Pending", "Queuing", "the job is queuing for resources")
        self._phase_delay("Pending")
        if self._fails_at("Pending"):
            self.store.add_event(
                self.job_id, "injected fault: the job failed in the queue", "Error"
            )
            self._set_final("Failed", "Failed")
            return
        self._move(("Pending",), "Running", "Running", "the job is running", start_time=now_ms())
        spec, paths = self._container()
        self._service_line(
            f"training job {self.job_id} starting on {counted(self.plan.nodes, 'node')}"
        )
        self._download(spec, paths)
        self._phase_delay("Running")
        if self._fails_at("Running"):
            self.store.add_event(
                self.job_id, "injected fault: the job failed while running", "Error"
            )
            self._service_line("injected fault: the job failed")
            self._set_final(
                "Failed",
                "Failed",
                [self._status(i, 1, "injected fault") for i in range(self.plan.nodes)],
            )
            return
        self._start(spec, paths)
        codes = self._monitor()
        self._upload_outputs()
        if self._stop_event.is_set():
            raise _Stopped
        failed = [i for i, code in enumerate(codes) if code != 0]
        statuses = [self._status(i, code) for i, code in enumerate(codes)]
        for i, code in enumerate(codes):
            self._service_line(f"training end with exit code {code}", task=i)
        self._export_logs()
        if failed:
            first = failed[0]
            self.store.add_event(
                self.job_id,
                f"worker-{first} exited with code {codes[first]}; the job failed",
                "Error",
            )
            self._set_final("Failed", "Failed", statuses)
        else:
            self.store.add_event(self.job_id, "the job completed")
            self._set_final("Completed", "Completed", statuses)

    # -- phases -------------------------------------------------------------------------------

    def _fails_at(self, phase: str) -> bool:
        return self.fault is not None and self.fault.fail_at == phase

    def _phase_delay(self, phase: str) -> None:
        seconds = self.fault.delays.get(phase, 0.0) if self.fault else 0.0
        if self._stop_event.wait(seconds) if seconds else self._stop_event.is_set():
            raise _Stopped

    def _move(
        self, allowed: tuple[str, ...], phase: str, secondary: str, message: str, **values: object
    ) -> None:
        if not self.store.transition(
            self.job_id, allowed, phase=phase, secondary_phase=secondary, **values
        ):
            raise _Stopped  # terminated (or deleted) meanwhile
        self.store.add_event(self.job_id, message)

    def _set_final(
        self, phase: str, secondary: str, statuses: list[dict[str, object]] | None = None
    ) -> None:
        values: dict[str, object] = {
            "phase": phase,
            "secondary_phase": secondary,
            "end_time": now_ms(),
        }
        if statuses is not None:
            values["task_statuses"] = statuses
        if not self.store.transition(self.job_id, ("Creating", "Pending", "Running"), **values):
            # Terminate won the race: the job ends Terminated, as the service reports it.
            self._finish_stopped()

    def _finish_stopped(self) -> None:
        codes = self._stop_processes()
        statuses = [self._status(i, code, "stopped") for i, code in enumerate(codes)]
        with contextlib.suppress(Exception):
            self._upload_outputs()
            self._export_logs()
        if self._shutdown:
            self.store.add_event(
                self.job_id,
                "the emulator stopped while the job was active; its processes were stopped",
                "Error",
            )
            values: dict[str, object] = {"phase": "Abnormal", "secondary_phase": "Lost"}
        else:
            self.store.add_event(self.job_id, "the job was terminated")
            values = {"phase": "Terminated", "secondary_phase": "Terminated"}
        if statuses:
            values["task_statuses"] = statuses
        self.store.transition(self.job_id, ACTIVE, end_time=now_ms(), **values)

    @staticmethod
    def _status(index: int, code: int | None, message: str = "") -> dict[str, object]:
        return {
            "task": f"worker-{index}",
            "exit_code": -1 if code is None else code,
            "message": message or ("" if code == 0 else f"exit code {code}"),
        }

    # -- the container ------------------------------------------------------------------------

    def _container(self) -> tuple[JobSpec, ContainerPaths]:
        root = self.store.job_dir(self.job_id) / "ma-user"
        first = container_paths(self.plan.to_spec(root), root)
        spec = self.plan.to_spec(first.code_dir)
        paths = container_paths(spec, root)
        self._paths = paths
        for directory in (paths.code_dir, paths.log_dir, *paths.outputs.values()):
            directory.mkdir(parents=True, exist_ok=True)
        log_dir = self.store.log_path(self.job_id, "worker-0").parent
        log_dir.mkdir(parents=True, exist_ok=True)
        self._logs = [
            self.store.log_path(self.job_id, f"worker-{i}").open("ab")
            for i in range(self.plan.nodes)
        ]
        return spec, paths

    def _service_line(self, text: str, task: int | None = None) -> None:
        targets = self._logs if task is None else [self._logs[task]]
        for log in targets:
            log.write(f"{SERVICE}{text}\n".encode())
            log.flush()

    def _download(self, spec: JobSpec, paths: ContainerPaths) -> None:
        count = self.storage.download(self.plan.code_dir, paths.code_dir)
        self._service_line(
            f"downloaded {counted(count, 'code file')} from {self.plan.code_dir.rest_path}"
        )
        for channel in self.plan.inputs:
            if not self.storage.exists(channel.uri):
                raise RuntimeError(f"input {channel.name}: no data at {channel.uri.rest_path}")
            count = self.storage.download(channel.uri, paths.inputs[channel.name])
            files = counted(count, "file")
            self._service_line(
                f"downloaded input {channel.name}: {files} from {channel.uri.rest_path}"
            )

    def _start(self, spec: JobSpec, paths: ContainerPaths) -> None:
        standin = npu_standin_for(spec, self.python)
        for notice in standin.notices:
            self._service_line(f"[majob] {notice}")
            self.store.add_event(self.job_id, f"majob: {notice}", "Warning")
        port = free_port()
        base = {
            k: v
            for k, v in os.environ.items()
            if k not in _DROPPED_ENV and not k.startswith(_DROPPED_PREFIXES)
        }
        for index in range(self.plan.nodes):
            command = node_command(
                spec,
                paths,
                node=index,
                nodes=self.plan.nodes,
                run_id=self.job_id,
                master_port=port,
                python=self.python,
            )
            env = {**base, **command.env}
            python_path = (*standin.pythonpath, str(paths.job_dir), base.get("PYTHONPATH"))
            env["PYTHONPATH"] = os.pathsep.join(p for p in python_path if p)
            env["PATH"] = os.pathsep.join((os.path.dirname(self.python), base.get("PATH", "")))
            self._processes.append(
                subprocess.Popen(
                    command.argv,
                    cwd=command.cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    stdout=self._logs[index],
                    stderr=subprocess.STDOUT,
                    start_new_session=True,
                )
            )
        self.store.set_processes(self.job_id, [ProcessRef.of(p.pid) for p in self._processes])

    def _monitor(self) -> list[int | None]:
        """Until every node exits, one fails (the others are then stopped) or a stop is asked."""
        next_upload = time.monotonic() + self.upload_period
        while not self._stop_event.is_set():
            codes = [p.poll() for p in self._processes]
            if any(code not in (None, 0) for code in codes) or all(c is not None for c in codes):
                break
            if time.monotonic() >= next_upload:
                self._upload_outputs()
                self._export_logs()
                next_upload = time.monotonic() + self.upload_period
            self._stop_event.wait(POLL_SECONDS)
        return self._stop_processes()

    def _stop_processes(self) -> list[int | None]:
        """SIGTERM each node's group, SIGKILL what is left after the grace period; sweep."""
        running = [p for p in self._processes if p.poll() is None]
        for process in running:
            _signal_group(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + STOP_GRACE_SECONDS
        for process in running:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process.pid, signal.SIGKILL)
                process.wait()
        for process in self._processes:
            _signal_group(process.pid, signal.SIGKILL)  # a container ends with its boot process
        return [p.returncode for p in self._processes]

    # -- OBS ----------------------------------------------------------------------------------

    def _upload_outputs(self) -> None:
        """Each output channel's dir to its OBS path (what exists of it so far)."""
        if self._paths is None:
            return  # stopped before the container was built: nothing was written
        for channel in self.plan.outputs:
            directory = self._paths.outputs[channel.name]
            if directory.is_dir():
                self.storage.upload_tree(directory, channel.uri)

    def _export_logs(self) -> None:
        """Each task's log to ``log_export_path`` as ``modelarts-job-<id>-worker-<i>.log``."""
        if self.plan.log_export is None:
            return
        for index in range(self.plan.nodes):
            log = self.store.log_path(self.job_id, f"worker-{index}")
            if log.exists():
                name = f"modelarts-job-{self.job_id}-worker-{index}.log"
                self.storage.upload_file(log, self.plan.log_export.join(name), "text/plain")


def _signal_group(pid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signum)


def kill_leftovers(processes: Mapping[str, Sequence[ProcessRef]]) -> None:
    """Kill the process groups a crashed emulator left behind (by job id): only a group whose
    leader is still the process the record names; its pid may be another process's by now."""
    for group in processes.values():
        for leader in group:
            signal_if_ours(leader, signal.SIGKILL, group=True)

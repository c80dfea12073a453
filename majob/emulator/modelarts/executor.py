"""Runs an emulated training job for real: the lifecycle thread of one job.

``JobRun`` walks a job through Creating → Pending → Running → Completed/Failed (or Terminating →
Terminated when stopped, Abnormal when the emulator shuts down under it). In Running it lays out
the container under ``<state>/jobs/<id>/ma-user`` (``container.py``), downloads the code and
inputs from the fake OBS, starts one process per node through the runner's node processes (each
in its own session, its output appended to the task's log), uploads the outputs and exports the
logs every ``upload_period`` seconds and at the end, and sets the phase from the exit codes. No
step waits on a clock except an injected slow phase.
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from typing import IO

from majob.emulator.modelarts.container import JobContainer, lay_out, node_commands
from majob.emulator.modelarts.jobfaults import JobFault
from majob.emulator.modelarts.plan import JobPlan
from majob.emulator.modelarts.storage import JobStorage
from majob.emulator.modelarts.store import JobStore, now_ms
from majob.processes import ProcessRef, signal_if_ours
from majob.runner.host import free_port, host_environment, node_environment
from majob.runner.nodes import NodeGroup
from majob.runner.standin import npu_standin_for
from majob.text import counted

ACTIVE = ("Creating", "Pending", "Running", "Terminating")
TERMINAL = ("Completed", "Failed", "Terminated", "Abnormal")
SERVICE = "[ModelArts Service Log]"
# A container has none of these: this machine's cloud credentials and majob settings.
HOST_ONLY_ENV_PREFIXES = ("HUAWEICLOUD_SDK_", "MAJOB_")


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
        self._nodes = NodeGroup()  # no live output: each node writes into its task's log
        self._logs: list[IO[bytes]] = []  # the task logs, for the service's own lines
        self._container: JobContainer | None = None
        self._next_upload = 0.0

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
            self._nodes.stop()
            self.store.add_event(self.job_id, f"the job failed: {error}", "Error")
            self._set_final("Failed", "Failed")
        finally:
            for log in self._logs:
                log.close()
            if self._on_exit is not None:
                self._on_exit(self.job_id)

    def _lifecycle(self) -> None:
        self._phase_delay("Creating")
        if self._injected_failure("Creating", "the job failed while creating", "CreateFailed"):
            return
        self._move(("Creating",), "Pending", "Queuing", "the job is queuing for resources")
        self._phase_delay("Pending")
        if self._injected_failure("Pending", "the job failed in the queue"):
            return
        self._move(("Pending",), "Running", "Running", "the job is running", start_time=now_ms())
        container = self._lay_out()
        self._service_line(
            f"training job {self.job_id} starting on {counted(self.plan.nodes, 'node')}"
        )
        self._download(container)
        self._phase_delay("Running")
        if self._injected_failure("Running", "the job failed while running"):
            return
        self._start(container)
        codes = self._monitor()
        self._upload_outputs()
        if self._stop_event.is_set():
            raise _Stopped
        self._conclude(codes)

    def _conclude(self, codes: list[int | None]) -> None:
        """The job's end from its nodes' exit codes: Completed when all are 0."""
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

    def _injected_failure(self, phase: str, what: str, secondary: str = "Failed") -> bool:
        """Whether an injected fault fails the job at ``phase`` (then it is failed, said so)."""
        if self.fault is None or not self.fault.fails_at(phase):
            return False
        self.store.add_event(self.job_id, f"injected fault: {what}", "Error")
        statuses = None
        if phase == "Running":
            self._service_line("injected fault: the job failed")
            statuses = [self._status(i, 1, "injected fault") for i in range(self.plan.nodes)]
        self._set_final("Failed", secondary, statuses)
        return True

    def _phase_delay(self, phase: str) -> None:
        seconds = self.fault.delay(phase) if self.fault else 0.0
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
        codes = self._nodes.stop()
        statuses = [self._status(i, code, "stopped") for i, code in enumerate(codes)]
        with contextlib.suppress(Exception):  # it ends Terminated or Abnormal all the same
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

    def _lay_out(self) -> JobContainer:
        container = lay_out(self.plan, self.store.job_dir(self.job_id) / "ma-user")
        self._container = container
        for directory in (container.code_dir, container.log_dir, *container.outputs.values()):
            directory.mkdir(parents=True, exist_ok=True)
        log_dir = self.store.log_path(self.job_id, "worker-0").parent
        log_dir.mkdir(parents=True, exist_ok=True)
        self._logs = [
            self.store.log_path(self.job_id, f"worker-{i}").open("ab")
            for i in range(self.plan.nodes)
        ]
        return container

    def _service_line(self, text: str, task: int | None = None) -> None:
        targets = self._logs if task is None else [self._logs[task]]
        for log in targets:
            log.write(f"{SERVICE}{text}\n".encode())
            log.flush()

    def _download(self, container: JobContainer) -> None:
        count = self.storage.download(self.plan.code_dir, container.code_dir)
        self._service_line(
            f"downloaded {counted(count, 'code file')} from {self.plan.code_dir.rest_path}"
        )
        for channel in self.plan.inputs:
            if not self.storage.exists(channel.uri):
                raise RuntimeError(f"input {channel.name}: no data at {channel.uri.rest_path}")
            count = self.storage.download(channel.uri, container.inputs[channel.name])
            files = counted(count, "file")
            self._service_line(
                f"downloaded input {channel.name}: {files} from {channel.uri.rest_path}"
            )

    def _start(self, container: JobContainer) -> None:
        """One process per node, with this machine's environment less what a container lacks;
        an Ascend job on a host without torch_npu gets the CPU stand-in (said in its log)."""
        standin = npu_standin_for(self.plan.is_ascend, self.python)
        for notice in standin.notices:
            self._service_line(f"[majob] {notice}")
            self.store.add_event(self.job_id, f"majob: {notice}", "Warning")
        base = host_environment(HOST_ONLY_ENV_PREFIXES)
        first_on_path = (*standin.pythonpath, str(container.job_dir))
        commands = node_commands(
            self.plan, container, job_id=self.job_id, python=self.python, port=free_port()
        )
        for command in commands:
            env = node_environment(
                base, command.env, python=self.python, first_on_path=first_on_path
            )
            self._nodes.start(
                replace(command, env=env), self.store.log_path(self.job_id, command.name)
            )
        self.store.set_processes(self.job_id, self._nodes.refs())

    def _monitor(self) -> list[int | None]:
        """Until every node exits, one fails (the others are then stopped) or a stop is asked;
        the outputs and logs go to OBS every ``upload_period`` meanwhile."""
        self._next_upload = time.monotonic() + self.upload_period
        self._nodes.wait(stop=self._stop_event, tick=self._upload_when_due)
        return self._nodes.stop()

    def _upload_when_due(self) -> None:
        if time.monotonic() >= self._next_upload:
            self._upload_outputs()
            self._export_logs()
            self._next_upload = time.monotonic() + self.upload_period

    # -- OBS ----------------------------------------------------------------------------------

    def _upload_outputs(self) -> None:
        """Each output channel's dir to its OBS path (what exists of it so far)."""
        if self._container is None:
            return  # stopped before the container was built: nothing was written
        for channel in self.plan.outputs:
            directory = self._container.outputs[channel.name]
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


def kill_leftovers(processes: Mapping[str, Sequence[ProcessRef]]) -> None:
    """Kill the process groups a crashed emulator left behind (by job id): only a group whose
    leader is still the process the record names; its pid may be another process's by now."""
    for group in processes.values():
        for leader in group:
            signal_if_ours(leader, signal.SIGKILL, group=True)

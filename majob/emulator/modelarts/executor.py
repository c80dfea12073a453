"""Runs an emulated training job for real: the lifecycle thread of one job.

``JobRun`` walks a job through Creating → Pending → Running → Completed/Failed (or Terminating →
Terminated when stopped, Abnormal when the emulator shuts down under it). In Running it lays out
the container under ``<state>/jobs/<id>/ma-user`` (``container.py``), downloads the code and
inputs from the fake OBS, starts one process per node through the runner's node processes (each
in its own session, its output appended to the task's log), uploads the outputs and exports the
logs every ``upload_period`` seconds and at the end, and sets the phase from the exit codes. No
step waits on a clock except an injected slow phase. A run that ends in a fault (a node lost, a
hang, with unconditional retry any failure) is restarted as its annotations ask
(``restarts.py``; ``watchdog.py`` strikes injected node faults and finds hangs).
"""

from __future__ import annotations

import contextlib
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import replace
from typing import IO

from majob.emulator.modelarts.container import JobContainer, lay_out, node_commands, remove
from majob.emulator.modelarts.jobfaults import JobFault
from majob.emulator.modelarts.plan import JobPlan
from majob.emulator.modelarts.restarts import (
    RESCHEDULE,
    Fault,
    RunRecord,
    decide,
    failure_text,
    restart_text,
    run_fault,
    task_index,
    task_status,
)
from majob.emulator.modelarts.standin_notes import standin_notes
from majob.emulator.modelarts.storage import JobStorage
from majob.emulator.modelarts.store import JobStore, now_ms
from majob.emulator.modelarts.transfers import JobTransfers
from majob.emulator.modelarts.usage import UsageRecorder
from majob.emulator.modelarts.volume_watch import VolumeFull, VolumeWatch
from majob.emulator.modelarts.watchdog import HangDetected, Watchdog, log_size
from majob.runner.host import free_port, host_environment, node_environment
from majob.runner.nodes import NodeGroup
from majob.runner.standin import npu_standin_for
from majob.text import counted

ACTIVE = ("Creating", "Pending", "Running", "Terminating")
TERMINAL = ("Completed", "Failed", "Terminated", "Abnormal")
SERVICE = "[ModelArts Service Log]"
SAMPLE_PERIOD = 0.5  # seconds between two measures of the nodes' CPU and memory
USAGE_FILE = "usage.json"  # each task's per-minute usage, kept when the job ends
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
        hang_window: float = 600.0,
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
        self.hang_window = hang_window  # seconds without output or CPU use: a hang
        self.transfers = JobTransfers(
            plan,
            storage,
            job_id,
            say=self._service_line,
            log_of=lambda task: store.log_path(job_id, task),
        )
        self.records: list[RunRecord] = []  # one per run: the first, then one per restart
        self._watchdog: Watchdog | None = None
        self.volumes = VolumeWatch(plan, store.job_dir(job_id), store.directory)  # disks' room
        self._log_starts: list[int] = []  # each task log's size when its node started
        self._on_exit = on_exit
        self._stop_event = threading.Event()
        self._shutdown = False
        self._nodes = NodeGroup()  # no live output: each node writes into its task's log
        self._logs: list[IO[bytes]] = []  # the task logs, for the service's own lines
        self._container: JobContainer | None = None
        self._next_upload = 0.0
        self._next_sample = 0.0
        self.usage = UsageRecorder(
            plan.nodes,
            cores=plan.flavor.cores,
            memory_bytes=plan.flavor.memory_bytes,
            path=store.job_dir(job_id) / USAGE_FILE,
        )

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
            self._fail(f"the job failed: {error}")
        finally:
            self.storage.revoke_credentials(self.job_id)
            for log in self._logs:
                log.close()
            with contextlib.suppress(OSError):  # the job may have been deleted meanwhile
                self.usage.save()
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
        container = self._new_container()
        self._phase_delay("Running")
        if self._injected_failure("Running", "the job failed while running"):
            return
        self.records.append(RunRecord(time.time()))
        while True:
            self._start(container)
            codes, fault = self._monitor()
            self.transfers.upload_outputs(self._container)
            if self._stop_event.is_set():
                raise _Stopped
            if fault is None or not self._restart(fault):
                break
            if self.records[-1].start_type == "init_or_rescheduled":
                container = self._new_container()
        self._conclude(codes, fault)

    def _new_container(self) -> JobContainer:
        """Fresh containers (the first, or after a job-level restart): laid out empty, the code
        and inputs downloaded, and the outputs marked for predownload (an in-place restart
        keeps its container's files instead)."""
        remove(self.store.job_dir(self.job_id) / "ma-user")
        for log in self._logs:
            log.close()
        container = self._lay_out()
        nodes = counted(self.plan.nodes, "node")
        run = f"run {len(self.records)}" if self.records else "its first run"
        self._service_line(f"training job {self.job_id} starting on {nodes} ({run})")
        self.transfers.download(container)
        self.transfers.predownload(container)
        return container

    def _restart(self, fault: Fault) -> bool:
        """Whether the job restarts after ``fault`` (its annotations decide); the run's record,
        events and log lines say what happened either way."""
        run = self.records[-1]
        run.end_at, run.fault = time.time(), fault
        recover = decide(self.plan.restart, fault, self.records[:-1])
        if recover is None:
            run.result = "quotaExceeded" if self.plan.restart.retries else ""
            self._save_records()
            return False
        run.recover, run.result, run.recovered_at = recover, "success", time.time()
        what = restart_text(recover, self.plan.restart, self.records)
        said = f"fault on {fault.task} ({fault.scenario}): {fault.reason}; the job restarts"
        self.store.add_event(self.job_id, f"{said} ({what})", "Warning")
        self._service_line(f"{fault.reason}; restarting the job ({what})")
        start_type = "init_or_rescheduled" if recover == RESCHEDULE else "restarted"
        self.records.append(RunRecord(time.time(), start_type))
        self._save_records()
        return True

    def _save_records(self, *, end: bool = False) -> None:
        """The runs' records on the wire; ``end``: the run under way ends now (if not yet)."""
        if end and self.records:
            self.records[-1].end_at = self.records[-1].end_at or time.time()
        self.store.update(self.job_id, running_records=[r.wire() for r in self.records])

    def _conclude(self, codes: list[int | None], fault: Fault | None = None) -> None:
        """The job's end from its nodes' exit codes (Completed when all are 0) and the fault
        that ended its last run, if one did."""
        failed = [i for i, code in enumerate(codes) if code != 0]
        statuses = [task_status(i, code) for i, code in enumerate(codes)]
        if fault is not None:
            index = task_index(fault.task)
            statuses[index] = task_status(index, codes[index], fault.reason)
        for i, code in enumerate(codes):
            self._service_line(f"training end with exit code {code}", task=i)
        self.transfers.export_logs()
        self._save_records(end=True)
        if failed or fault is not None:
            text = failure_text(codes, fault, self.plan.restart, self.records)
            self.store.add_event(self.job_id, text, "Error")
            self._set_final("Failed", "Failed", statuses)
        else:
            self.store.add_event(self.job_id, "the job completed")
            self._set_final("Completed", "Completed", statuses)

    def _fail(self, text: str) -> None:
        """The job fails on the emulator's own error (its run kept, ended), said by ``text``."""
        codes = self._nodes.stop()
        self._save_records(end=True)
        with contextlib.suppress(Exception):  # the logs may be closed (or be what failed)
            self._service_line(text)
        self.store.add_event(self.job_id, text, "Error")
        statuses = [task_status(i, code, text) for i, code in enumerate(codes)]
        self._set_final("Failed", "Failed", statuses or None)

    # -- phases -------------------------------------------------------------------------------

    def _injected_failure(self, phase: str, what: str, secondary: str = "Failed") -> bool:
        """Whether an injected fault fails the job at ``phase`` (then it is failed, said so)."""
        if self.fault is None or not self.fault.fails_at(phase):
            return False
        self.store.add_event(self.job_id, f"injected fault: {what}", "Error")
        statuses = None
        if phase == "Running":
            self._service_line("injected fault: the job failed")
            statuses = [task_status(i, 1, "injected fault") for i in range(self.plan.nodes)]
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
        values = dict[str, object](phase=phase, secondary_phase=secondary, end_time=now_ms())
        if statuses is not None:
            values["task_statuses"] = statuses
        if not self.store.transition(self.job_id, ("Creating", "Pending", "Running"), **values):
            # Terminate won the race: the job ends Terminated, as the service reports it.
            self._finish_stopped()

    def _finish_stopped(self) -> None:
        codes = self._nodes.stop()
        statuses = [task_status(i, code, "stopped") for i, code in enumerate(codes)]
        with contextlib.suppress(Exception):  # it ends Terminated or Abnormal all the same
            self.transfers.upload_outputs(self._container)
            self.transfers.export_logs()
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

    # -- the container ------------------------------------------------------------------------

    def _lay_out(self) -> JobContainer:
        container = lay_out(
            self.plan, self.store.job_dir(self.job_id) / "ma-user", self.volumes.mounts
        )
        self._container = container
        outputs = container.outputs.values()
        for directory in (container.code_dir, container.log_dir, container.working_dir, *outputs):
            directory.mkdir(parents=True, exist_ok=True)
        self.store.log_path(self.job_id, "worker-0").parent.mkdir(parents=True, exist_ok=True)
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

    def _start(self, container: JobContainer) -> None:
        """One process per node, with this machine's environment less what a container lacks
        plus the job's OBS credentials; the log says what engine or image the run stands in for,
        what it did not check; an Ascend job without torch_npu gets the CPU stand-in (said)."""
        for note in standin_notes(self.plan, self.python):
            self._service_line(note)
        self._nodes = NodeGroup()  # each run's own processes
        standin = npu_standin_for(self.plan.is_ascend, self.python)
        for notice in standin.notices:
            self._service_line(f"[majob] {notice}")
            self.store.add_event(self.job_id, f"majob: {notice}", "Warning")
        granted = self.storage.job_credentials(self.job_id)  # the job agency's (agency.py)
        base = {**host_environment(HOST_ONLY_ENV_PREFIXES), **granted}
        first_on_path = (*standin.pythonpath, str(container.job_dir))
        commands = node_commands(
            self.plan, container, job_id=self.job_id, python=self.python, port=free_port()
        )
        # Where each log stands before its node starts: the watchdog counts step lines from there.
        self._log_starts = [log_size(self.store.log_path(self.job_id, c.name)) for c in commands]
        python, nodes = self.python, len(commands)  # the nodes share this machine
        for command in commands:
            env, _ = node_environment(
                base, command.env, python=python, first_on_path=first_on_path, nodes=nodes
            )
            self._nodes.start(
                replace(command, env=env), self.store.log_path(self.job_id, command.name)
            )
        self.store.set_processes(self.job_id, self._nodes.refs())

    def _monitor(self) -> tuple[list[int | None], Fault | None]:
        """Until every node exits, one fails (the others are then stopped), one hangs or a stop
        is asked; the outputs and logs go to OBS every ``upload_period`` meanwhile. The exit
        codes, and the fault that ended the run early (None: it ended by itself)."""
        self._next_upload = time.monotonic() + self.upload_period
        strikes = self.fault is not None and self.fault.strikes_run(len(self.records))
        self._watchdog = Watchdog(
            [self.store.log_path(self.job_id, f"worker-{i}") for i in range(self.plan.nodes)],
            [node.process.pid for node in self._nodes.nodes],
            fault=self.fault if strikes else None,
            hang_window=self.hang_window,
            starts=self._log_starts,
        )
        try:
            self._nodes.wait(stop=self._stop_event, tick=self._tick)
        except HangDetected as hang:
            # ModelArts stops the hung processes forcibly: a frozen process takes no SIGTERM.
            self._nodes.nodes[task_index(hang.fault.task)].signal_group(signal.SIGKILL)
            return self._nodes.stop(), hang.fault
        self._watchdog.final_look()
        if (full := self.volumes.full(now=True)) is not None:
            raise VolumeFull(full)
        for node in self._nodes.nodes:  # a frozen (hung) node takes SIGTERM only once resumed
            node.signal_group(signal.SIGCONT)
        codes = self._nodes.stop()
        if self._stop_event.is_set():
            return codes, None
        return codes, run_fault(codes, self._watchdog.struck, self.plan.restart)

    def _tick(self) -> None:
        """Between two looks at the nodes: measure them, upload when it is time, and watch for
        an injected fault and hung nodes."""
        if time.monotonic() >= self._next_sample:
            self.usage.sample([node.process.pid for node in self._nodes.nodes])
            self._next_sample = time.monotonic() + SAMPLE_PERIOD
        if time.monotonic() >= self._next_upload:
            self.transfers.upload_outputs(self._container)
            self.transfers.export_logs()
            self._next_upload = time.monotonic() + self.upload_period
        if (full := self.volumes.full()) is not None:
            raise VolumeFull(full)  # the job fails (run's except), the nodes stopped
        watchdog = self._watchdog
        hung = watchdog.check() if watchdog is not None else None
        if watchdog is None or hung is None:
            return
        if self.plan.restart.hang_retry:
            raise HangDetected(hung)
        # Without hang-retry the service only reports the hang; the job runs on.
        watchdog.warned.add(task_index(hung.task))
        self.store.add_event(self.job_id, f"{hung.task} may be hung: {hung.reason}", "Warning")

"""Auto restart as the service documents it: which annotations ask for it, which faults it
covers, and the ``status.running_records`` a restarted job shows.

- ``fault-tolerance/job-retry-num`` ("1"-"128"): a job whose run ends in a fault (a node lost,
  a chip failed) is rebuilt on fresh containers (``job_reschedule``), at most that many times.
- ``fault-tolerance/job-unconditional-retry: "true"``: the script's own failure (a non-zero
  exit) restarts the job too, counted the same way, at most three times in a row.
- ``fault-tolerance/hang-retry: "true"``: a job detected as hung has its processes stopped and
  its boot command run again in the same container (``proc_restart``); that does not count
  against the retries, and happens at most three times in a row.

Sources: Huawei's "Unconditional Auto Restart" (develop-modelarts-0041) and "Training Job
Restart Upon Suspension" (develop-modelarts-0043) pages; the record fields are those of
``huaweicloudsdkmodelarts``' ``RunningRecord`` and ``RecoverRecord`` models.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from majob.emulator.modelarts.errors import bad_request

RETRY_NUM = "fault-tolerance/job-retry-num"
UNCONDITIONAL = "fault-tolerance/job-unconditional-retry"
HANG_RETRY = "fault-tolerance/hang-retry"
MAX_RETRIES = 128
IN_A_ROW = 3  # unconditional and hang restarts, each: "a maximum of three consecutive"

# fault scenarios (RecoverRecord.fault_scenario) and recoveries (RecoverRecord.recover)
NODE_FAULT = "node_fault"
JOB_FAILED = "job_failed"
JOB_HANGED = "job_hanged"
RESCHEDULE = "job_reschedule"
PROC_RESTART = "proc_restart"


@dataclass(frozen=True)
class RestartPolicy:
    """What a job's annotations ask for."""

    retries: int = 0
    unconditional: bool = False
    hang_retry: bool = False

    @classmethod
    def from_annotations(cls, annotations: Mapping[str, Any]) -> RestartPolicy:
        """The policy; a 400 for a value the service would not take."""
        text = annotations.get(RETRY_NUM)
        retries = 0
        if text is not None:
            if not isinstance(text, str) or not text.isdigit() or not 1 <= int(text) <= MAX_RETRIES:
                raise bad_request(
                    f"metadata.annotations[{RETRY_NUM!r}] is {text!r}",
                    f"give the number of restarts as a string from 1 to {MAX_RETRIES}",
                )
            retries = int(text)
        return cls(retries, _flag(annotations, UNCONDITIONAL), _flag(annotations, HANG_RETRY))


def _flag(annotations: Mapping[str, Any], key: str) -> bool:
    value = annotations.get(key)
    if value not in (None, "true", "false"):
        raise bad_request(f"metadata.annotations[{key!r}] is {value!r}", "give 'true' or 'false'")
    return value == "true"


@dataclass(frozen=True)
class Fault:
    """Why a run ended early: its scenario, the task it struck and what happened."""

    scenario: str
    task: str
    reason: str


@dataclass
class RunRecord:
    """One run of a job (the first, or one after a restart): a ``running_records`` item."""

    start_at: float  # seconds since the epoch
    start_type: str = "init_or_rescheduled"
    end_at: float | None = None
    fault: Fault | None = None
    recover: str = ""  # what followed the fault: RESCHEDULE, PROC_RESTART or "" (none)
    result: str = ""  # success, or quotaExceeded when no restart was left
    recovered_at: float | None = None

    def wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"start_at": int(self.start_at), "start_type": self.start_type}
        if self.end_at is not None:
            out["end_at"] = int(self.end_at)
        if self.fault is None:
            return out
        out["end_reason"] = self.fault.reason
        out["end_related_task"] = self.fault.task
        out["end_recover"] = self.recover
        out["recover_records"] = [
            {
                "recover_start_at": int(self.end_at or self.start_at),
                "recover_end_at": int(self.recovered_at or self.end_at or self.start_at),
                "recover": self.recover,
                "fault_scenario": self.fault.scenario,
                "reason": self.fault.reason,
                "related_task": self.fault.task,
                "recover_result": self.result,
            }
        ]
        return out


def decide(policy: RestartPolicy, fault: Fault, history: list[RunRecord]) -> str | None:
    """The recovery ``fault`` gets (RESCHEDULE or PROC_RESTART) given the runs before it, or
    None: the job ends."""
    if fault.scenario == JOB_HANGED:
        if policy.hang_retry and _in_a_row(history, JOB_HANGED) < IN_A_ROW:
            return PROC_RESTART
        return None
    if fault.scenario == JOB_FAILED and (
        not policy.unconditional or _in_a_row(history, JOB_FAILED) >= IN_A_ROW
    ):
        return None
    return RESCHEDULE if restarts_used(history) < policy.retries else None


def _in_a_row(history: list[RunRecord], scenario: str) -> int:
    """How many of the last runs ended in ``scenario`` and were restarted."""
    count = 0
    for run in reversed(history):
        if run.fault is None or run.fault.scenario != scenario or not run.recover:
            break
        count += 1
    return count


def restarts_used(history: list[RunRecord]) -> int:
    """How many of the runs were followed by a job-level restart (what the retries count)."""
    return sum(1 for run in history if run.recover == RESCHEDULE)


def failure_text(
    codes: list[int | None], fault: Fault | None, policy: RestartPolicy, runs: list[RunRecord]
) -> str:
    """The event of a failed job: which task failed and how, and when no restart was left,
    how many were used."""
    if fault is None or fault.scenario == JOB_FAILED:
        first = next(i for i, code in enumerate(codes) if code != 0)
        text = f"worker-{first} exited with code {codes[first]}; the job failed"
    else:
        text = f"fault on {fault.task} ({fault.scenario}): {fault.reason}; the job failed"
    used = restarts_used(runs)
    if policy.retries and used >= policy.retries:
        text += f" (no restarts left: {used} of {policy.retries} used)"
    return text


def task_index(task: str) -> int:
    """2 for ``worker-2``."""
    return int(task.rsplit("-", 1)[1])


def restart_text(recover: str, policy: RestartPolicy, runs: list[RunRecord]) -> str:
    """How the job restarts, for its events and log."""
    if recover == RESCHEDULE:
        return f"restart {restarts_used(runs)} of {policy.retries}, on new containers"
    return "its processes restarted in the same containers"


def task_status(index: int, code: int | None, message: str = "") -> dict[str, object]:
    """A ``status.task_statuses`` item: how task ``worker-<index>`` ended."""
    return {
        "task": f"worker-{index}",
        "exit_code": -1 if code is None else code,
        "message": message or ("" if code == 0 else f"exit code {code}"),
    }


def run_fault(codes: list[int | None], struck: Fault | None, policy: RestartPolicy) -> Fault | None:
    """Why a run whose nodes ended with ``codes`` failed: the injected node fault that
    ``struck`` it, else the first node's non-zero exit (the script's own failure); None when
    every node exited 0. An injected hang whose node ended before it was found hung counts
    as found when hang restarts are on: the injection must not depend on the script's pace.
    """
    if struck is not None and (struck.scenario == NODE_FAULT or policy.hang_retry):
        return struck
    failed = [i for i, code in enumerate(codes) if code != 0]
    if not failed:
        return None
    reason = f"worker-{failed[0]} exited with code {codes[failed[0]]}"
    return Fault(JOB_FAILED, f"worker-{failed[0]}", reason)

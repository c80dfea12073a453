"""A job's fault-tolerance history, read from ``status.running_records``: each run of the job
(the first, then one per restart) with why it ended and what ModelArts did about it.

The fields are those of ``huaweicloudsdkmodelarts``' ``RunningRecord`` and ``RecoverRecord``
models: ``end_reason``, ``end_related_task`` (``worker-1``), ``end_recover``
(``job_reschedule``: the job rebuilt on new containers; ``proc_restart``: its processes started
again in place; ...), and per recovery a ``fault_scenario`` (``node_fault``, ``job_failed``,
``job_hanged``, ...) and a ``recover_result`` (``quotaExceeded`` when no restart was left).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

from majob.text import counted


@dataclass(frozen=True)
class RunEnd:
    """How one run of a job ended early: when (epoch seconds), on which task, why, and what
    followed (``recover``: empty when nothing did and the job ended)."""

    at: int | None
    task: str
    reason: str
    scenario: str = ""
    recover: str = ""
    result: str = ""

    @property
    def restarted(self) -> bool:
        return bool(self.recover)

    def text(self) -> str:
        """``worker-1 node_fault: the node died -> job_reschedule``."""
        what = f" ({self.scenario})" if self.scenario else ""
        then = f" -> {self.recover}" if self.recover else ""
        if not self.recover and self.result == "quotaExceeded":
            then = " -> no restart left"
        return f"{self.task or 'the job'}{what}: {self.reason or 'no reason given'}{then}"

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


def read_run_ends(records: Any) -> tuple[RunEnd, ...]:
    """The early ends among ``status.running_records`` (a run that is still going, or ended by
    itself, is none)."""
    ends = []
    for item in records if isinstance(records, list) else ():
        if not isinstance(item, Mapping):
            continue
        recovers = [r for r in item.get("recover_records") or () if isinstance(r, Mapping)]
        # A run that ended by itself may still carry an ``end_reason``: only a fault names the
        # task it struck or what was done about it.
        if not (item.get("end_recover") or item.get("end_related_task") or recovers):
            continue
        first: Mapping[str, Any] = recovers[0] if recovers else {}
        at = item.get("end_at") or first.get("recover_start_at")
        ends.append(
            RunEnd(
                at=int(at) if isinstance(at, (int, float)) else None,
                task=str(item.get("end_related_task") or first.get("related_task") or ""),
                reason=str(item.get("end_reason") or first.get("reason") or ""),
                scenario=str(first.get("fault_scenario") or ""),
                recover=str(item.get("end_recover") or ""),
                result=str(first.get("recover_result") or ""),
            )
        )
    return tuple(ends)


def restarts_summary(ends: Sequence[RunEnd]) -> str:
    """``2 restarts: worker-1 (node_fault): ...; worker-1 (node_fault): ...``; ``''`` when the
    job never restarted."""
    restarts = [end for end in ends if end.restarted]
    if not restarts:
        return ""
    return f"{counted(len(restarts), 'restart')}: " + "; ".join(end.text() for end in restarts)

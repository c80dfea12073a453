"""How a job reads on the terminal: its phase, durations, times, and tables that fit.

rich is imported inside the functions: ``majob --help`` must not load it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

from majob.text import clock

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from majob.service.base import Job, TaskStatus


def console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def print_table(table: Table) -> None:
    """A table on the terminal fits it; piped, it is never wrapped (ids stay whole)."""
    shown = console()
    if not shown.is_terminal:
        shown.width = 240
    shown.print(table)


def took(ms: int) -> str:
    """``4m05s``, ``1h02m03s``."""
    return clock(ms)


def when(ms: int | None) -> str:
    """An epoch-ms moment in local time; ``-`` when unknown."""
    if not ms:
        return "-"
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def phase_text(job: Job) -> str:
    """``Running``, or ``Failed (ImagePullFailed)`` when the secondary phase says more."""
    return job.phase_label


def usage_text(measured: Mapping[str, Sequence[float]]) -> str:
    """One task's measured use, per minute: ``cpuUsage 12.5 40.1 %, memUsage 0.4 0.4 %``; a
    minute the service did not measure is ``-``; a metric it never measured is left out (the
    accelerators on a CPU flavor)."""
    shown = [
        f"{name} {' '.join('-' if v < 0 else f'{v:g}' for v in values)} %"
        for name, values in measured.items()
        if any(v >= 0 for v in values)
    ]
    return ", ".join(shown) or "not measured yet"


def task_text(task: str, state: TaskStatus | None, job: Job) -> str:
    """``task worker-0: exit 0 (message)``; before a task has ended, what is known instead
    (never a bare ``task worker-0:``)."""
    parts = []
    if state is not None and state.exit_code is not None:
        parts.append(f"exit {state.exit_code}")
    elif job.finished:
        parts.append("no exit code reported")
    else:
        parts.append(f"no exit code yet (job {job.phase})")
    if state is not None and state.message:
        parts.append(f"({state.message})")
    return f"task {task}: {' '.join(parts)}"


def fault_history(job: Job) -> list[str]:
    """What the job's restarts were (``2 restarts: ...``), then how its last run ended when
    a fault ended it and no restart followed; nothing for a job that never met a fault."""
    lines = [job.restarts_text()] if job.restarts else []
    last = job.run_ends[-1] if job.run_ends else None
    if last is None or last.restarted:
        return lines
    if lines:
        lines.append(f"then {last.text()}")
    elif last.scenario != "job_failed":  # a script's own exit is said with its task's exit code
        lines.append(f"the run ended: {last.text()}")
    return lines

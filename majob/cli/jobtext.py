"""How a job reads on the terminal: its phase, durations, times, and tables that fit.

rich is imported inside the functions: ``majob --help`` must not load it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from majob.service.base import Job


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
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def when(ms: int | None) -> str:
    """An epoch-ms moment in local time; ``-`` when unknown."""
    if not ms:
        return "-"
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def phase_text(job: Job) -> str:
    """``Running``, or ``Failed (ImagePullFailed)`` when the secondary phase says more."""
    extra = f" ({job.secondary_phase})" if job.secondary_phase not in ("", job.phase) else ""
    return f"{job.phase}{extra}"

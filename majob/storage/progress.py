"""The progress of a sync on a terminal: a rich bar for the files and one for the bytes.

Not on a terminal (a script, CI), nothing is shown and rich is not even imported: a sync run by
a script starts faster.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from majob.storage.plan import SyncPlan
from majob.text import counted

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import ProgressColumn


class SyncMeter:
    """The two bars of one sync's uploads, or nothing when they are not to be shown."""

    def __init__(self, plan: SyncPlan, show: bool | None, console: Console | None) -> None:
        self._progress: Any = None
        self._files: Any = None
        self._bytes: Any = None
        if not plan.uploads or show is False:
            return
        if show is None and console is None and not _may_be_terminal():
            return
        from rich.console import Console
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        console = console or Console(stderr=True)
        if show is None and not console.is_terminal:
            return
        amount, speed = _row_columns()
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            amount,
            speed,
            TimeRemainingColumn(),
            console=console,
            transient=True,
        )
        # The file row counts files, the byte row bytes: each row says its own unit.
        self._files = self._progress.add_task("files", total=len(plan.uploads), unit="files")
        self._bytes = self._progress.add_task("bytes", total=plan.upload_bytes, unit="bytes")

    @contextlib.contextmanager
    def running(self) -> Iterator[None]:
        if self._progress is None:
            yield
            return
        with self._progress:
            yield

    def add_bytes(self, count: int) -> None:
        if self._progress is not None and self._bytes is not None:
            self._progress.advance(self._bytes, count)

    def file_done(self) -> None:
        if self._progress is not None and self._files is not None:
            self._progress.advance(self._files, 1)


def _row_columns() -> tuple[ProgressColumn, ProgressColumn]:
    """The amount (``3/10 files`` or ``1.2/4.0 MB``) and speed (the byte row only) columns."""
    from rich.progress import DownloadColumn, ProgressColumn, Task, TransferSpeedColumn
    from rich.text import Text

    class Amount(ProgressColumn):
        def __init__(self) -> None:
            super().__init__()
            self._bytes = DownloadColumn(binary_units=True)  # KiB, as the plan says

        def render(self, task: Task) -> Text:
            if task.fields.get("unit") == "files":
                done, total = int(task.completed), int(task.total or 0)
                return Text(f"{done}/{counted(total, 'file')}", style="progress.download")
            return self._bytes.render(task)

    class Speed(ProgressColumn):
        def __init__(self) -> None:
            super().__init__()
            self._bytes = TransferSpeedColumn()

        def render(self, task: Task) -> Text:
            return Text("") if task.fields.get("unit") == "files" else self._bytes.render(task)

    return Amount(), Speed()


def _may_be_terminal() -> bool:
    """Whether rich could find stderr a terminal (it also honours FORCE_TERMINAL)."""
    try:
        tty = sys.stderr.isatty()
    except (AttributeError, ValueError):
        tty = False
    return tty or bool(os.environ.get("FORCE_TERMINAL"))

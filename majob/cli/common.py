"""What every command shares: consoles and the one way user errors are printed."""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, ParamSpec, TypeVar

import typer

from majob.errors import MajobError

if TYPE_CHECKING:
    from majob.spec.models import JobSpec, Stage
    from majob.storage.plan import SyncPlan

# Options several commands take, spelled once.
SetOption = Annotated[
    list[str] | None,
    typer.Option("--set", help="Override a field: PATH=VALUE (value read as YAML). Repeatable."),
]
ProfileOption = Annotated[
    str | None,
    typer.Option("--profile", envvar="MAJOB_PROFILE", help="Defaults profile to use."),
]
RunsDirOption = Annotated[
    Path | None,
    typer.Option("--runs-dir", help="Where run records are (default: ./.majob/runs)."),
]
SpecFileArgument = Annotated[Path, typer.Argument(help="The job spec (YAML).", show_default=False)]
LedgerOption = Annotated[
    Path | None,
    typer.Option(
        "--ledger",
        help="The ledger file (default: .majob/ledger.db at the spec's project root, the git "
        "top level or else the spec's directory).",
    ),
]
ResumeFromOption = Annotated[
    str | None,
    typer.Option(
        "--resume-from",
        metavar="SOURCE",
        help="Resume from these checkpoints: a stage (debug, formal: its checkpoint folder) or "
        "an obs:// folder, copied into this stage's own checkpoint folder before the job is "
        "created; the stage's own folder: accept what it holds.",
    ),
]

P = ParamSpec("P")
R = TypeVar("R")


def debug_enabled() -> bool:
    """``MAJOB_DEBUG=1`` shows tracebacks instead of one-line errors."""
    return os.environ.get("MAJOB_DEBUG", "") not in ("", "0")


def print_error(error: MajobError) -> None:
    """Print ``error`` as ``error: ...`` lines on stderr (plain text: they are meant to be read)."""
    for line in error.lines():
        sys.stderr.write(f"error: {line}\n")
    sys.stderr.flush()


def user_errors(command: Callable[P, R]) -> Callable[P, R]:
    """Turn a ``MajobError`` raised by ``command`` into printed lines and its exit code."""

    @functools.wraps(command)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return command(*args, **kwargs)
        except MajobError as error:
            if debug_enabled():
                raise
            print_error(error)
            raise typer.Exit(error.exit_code) from None

    return wrapper


def warn_about_sets(spec: JobSpec, overrides: list[str] | None, stages: list[Stage]) -> None:
    """Warn on stderr about each ``--set`` that would not do what it says: one a stage of
    ``stages`` overrides, a hyperparameter the code's argparse does not define."""
    if not overrides:
        return  # nothing to check, and the checks' module is not loaded
    from majob.spec.set_checks import set_warnings

    for line in set_warnings(spec, overrides or [], stages):
        typer.echo(f"warning: {line}", err=True)


def _raise_keyboard_interrupt(signum: int, frame: FrameType | None) -> None:
    raise KeyboardInterrupt


@contextlib.contextmanager
def sigterm_as_ctrl_c() -> Iterator[None]:
    """Inside, a SIGTERM (a scheduler, ``timeout``, ``kill``) stops majob as Ctrl-C does: the
    nodes, in sessions of their own, are stopped and the records say ``interrupted``. Left to
    its default, SIGTERM would end majob at once and leave both behind."""
    previous = signal.signal(signal.SIGTERM, _raise_keyboard_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def print_sync_plan(plan: SyncPlan, files: int | None = 0) -> None:
    """A sync plan's summary, then ``files`` of its per-file lines (None: all of them), then its
    warnings (on stderr)."""
    for line in plan.summary_lines():
        typer.echo(line)
    if files != 0:
        for line in plan.file_lines(files):
            typer.echo(line)
    for line in plan.warning_lines():
        typer.echo(line, err=True)

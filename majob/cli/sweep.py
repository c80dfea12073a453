"""``majob sweep SPEC`` and ``majob sweep status|stop|resume|show SWEEP``.

One command with a first word that is either a spec file or an action: ``majob sweep
spec.yaml`` starts a sweep, ``majob sweep show <id>`` reads one. Optuna, the service clients
and rich are imported inside the bodies.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import LedgerOption, ProfileOption, SetOption, sigterm_as_ctrl_c, user_errors
from majob.cli.jobtext import print_table
from majob.errors import UserInputError

if TYPE_CHECKING:
    from rich.live import Live
    from rich.table import Table

    from majob.sweep.results import SweepResult

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""

ACTIONS = ("status", "stop", "resume", "show")


@commands.command("sweep")
@user_errors
def sweep(
    target: Annotated[
        str,
        typer.Argument(
            metavar="SPEC|ACTION",
            help="A spec with a sweep: block to start a sweep, or status, stop, resume or show.",
        ),
    ],
    sweep_id: Annotated[
        str | None, typer.Argument(metavar="[SWEEP]", help="The sweep id, after an action.")
    ] = None,
    trials: Annotated[int | None, typer.Option("--trials", help="Trials in all.")] = None,
    parallel: Annotated[int | None, typer.Option("--parallel", help="Trials at once.")] = None,
    stage: Annotated[
        str | None, typer.Option("--stage", help="debug or formal (default: the spec's).")
    ] = None,
    upload_inputs: Annotated[
        bool,
        typer.Option("--upload-inputs", help="Upload each input's local stand-in first."),
    ] = False,
    output: Annotated[
        Path | None,
        typer.Option("--output", "-o", help="show: where the best spec goes (<spec>.best.yaml)."),
    ] = None,
    html: Annotated[
        Path | None, typer.Option("--html", help="show: also write the table and plot here.")
    ] = None,
    overrides: SetOption = None,
    profile: ProfileOption = None,
    ledger: LedgerOption = None,
) -> None:
    """Run many trials of one spec, searched by Optuna; Ctrl-C leaves the trials running.

    The trial template runs locally first, then each trial is a job <name>-t<k>."""
    if target in ACTIONS:
        if not sweep_id:
            raise UserInputError(
                f"majob sweep {target} needs the sweep's id (majob sweep {target} ID)"
            )
        _action(target, sweep_id, ledger=ledger, output=output, html=html)
        return
    if sweep_id is not None:
        raise UserInputError(
            f"{sweep_id!r}: a sweep id goes after an action ({', '.join(ACTIONS)})"
        )
    _start(
        target,
        profile=profile,
        trials=trials,
        parallel=parallel,
        stage=stage,
        overrides=overrides or [],
        ledger=ledger,
        upload_inputs=upload_inputs,
    )


def _start(
    spec: str,
    *,
    profile: str | None,
    trials: int | None,
    parallel: int | None,
    stage: str | None,
    overrides: list[str],
    ledger: Path | None,
    upload_inputs: bool,
) -> None:
    """A new sweep of ``spec``: each ``--set`` that would not do what it says is a warning
    first, then the trials run under the live table."""
    from majob.sweep.run import Sweep

    table = _LiveTable()
    runner = Sweep(
        spec,
        profile=profile,
        trials=trials,
        parallel=parallel,
        stage=stage,
        overrides=overrides,
        ledger=ledger,
        upload_inputs=upload_inputs,
        report=table.line,
        on_change=table.update,
        warn=False,
    )
    for line in runner.set_warnings:
        typer.echo(f"warning: {line}", err=True)
    _ran(lambda: runner.run(), table)


def _action(
    action: str, sweep_id: str, *, ledger: Path | None, output: Path | None, html: Path | None
) -> None:
    from majob.sweep import control, run
    from majob.sweep.results import write_best_spec, write_html

    if action == "resume":
        table = _LiveTable()
        _ran(
            lambda: run.resume(sweep_id, ledger=ledger, report=table.line, on_change=table.update),
            table,
        )
        return
    if action == "stop":
        result, stopped = control.stop(sweep_id, ledger=ledger)
        typer.echo(f"stopped {len(stopped)} running trial job(s): {', '.join(stopped) or 'none'}")
        _print_table(result)
        return
    result = control.status(sweep_id, ledger=ledger)
    _print_table(result)
    if result.importance:
        said = ", ".join(f"{name} {value:.2f}" for name, value in result.importance.items())
        typer.echo(f"parameter importance (fANOVA): {said}")
    if action == "show":
        if result.best is not None:
            typer.echo(f"best spec: {write_best_spec(result, output)}")
        if html is not None:
            typer.echo(f"plot: {write_html(result, html)}")


def _ran(run: Callable[[], SweepResult], table: _LiveTable) -> None:
    """Run the sweep (or its resume) under the live table; the table after, exit 1 when no
    trial completed, 130 on Ctrl-C (the trials keep running: the loop said how to go on)."""
    try:
        with sigterm_as_ctrl_c(), table:
            result = run()
    except KeyboardInterrupt:
        raise typer.Exit(130) from None
    _print_table(result)
    if result.best is None:
        raise typer.Exit(1)


class _LiveTable:
    """The sweep's table redrawn in place on a terminal; elsewhere, its progress lines."""

    def __init__(self) -> None:
        from rich.console import Console

        self.console = Console(stderr=False)
        self.live: Live | None = None

    def __enter__(self) -> _LiveTable:
        if sys.stdout.isatty():
            from rich.live import Live

            live = Live(console=self.console, auto_refresh=False, transient=True)
            live.start()
            self.live = live
        return self

    def __exit__(self, *exc: object) -> None:
        if self.live is not None:
            self.live.stop()

    def line(self, text: str) -> None:
        if self.live is not None:
            self.live.console.print(text, markup=False, highlight=False)
        else:
            typer.echo(text)

    def update(self, result: SweepResult) -> None:
        if self.live is not None:
            self.live.update(_table(result), refresh=True)


def _table(result: SweepResult) -> Table:
    from rich.table import Table

    table = Table(title=result.summary, title_justify="left")
    names = list(dict.fromkeys(n for row in result.rows for n in row.params))
    for column in ("trial", *names, "state", "phase", result.info.metric, "job", "why"):
        table.add_column(column, overflow="fold")
    for row in result.sorted():
        values = [f"{v:.4g}" if isinstance(v, float) else str(v) for v in row.params.values()]
        table.add_row(
            row.label,
            *values,
            row.state,
            row.phase,
            "" if row.objective is None else f"{row.objective:g}",
            row.job_name,
            row.reason,
        )
    return table


def _print_table(result: SweepResult) -> None:
    print_table(_table(result))

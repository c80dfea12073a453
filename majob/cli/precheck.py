"""``majob precheck RUN``: msprobe's API accuracy pre-check, its CPU benchmark run here."""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import ProfileOption, RunsDirOption, user_errors

if TYPE_CHECKING:
    from majob.precision.precheck import ApiVerdict, Precheck

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""


@commands.command()
@user_errors
def precheck(
    run: Annotated[
        str,
        typer.Argument(
            help="A tensor dump: a run id, a dump/run directory or an obs:// path.",
            show_default=False,
        ),
    ],
    top: Annotated[int, typer.Option("--top", min=1, help="APIs shown, worst first.")] = 10,
    apis: Annotated[
        int | None, typer.Option("--apis", min=1, help="Check only the first N APIs per rank.")
    ] = None,
    output: Annotated[
        Path | None,
        typer.Option("--output", help="Where msprobe's CSVs go (default: .majob/precheck/)."),
    ] = None,
    runs_dir: RunsDirOption = None,
    profile: ProfileOption = None,
) -> None:
    """Check each dumped API's output against the CPU benchmark by msprobe's standard.

    The dump's outputs (an NPU cloud job's, dumped with precision: {task: tensor}) are the
    device side; each API runs again here on the CPU in raised precision. Exit 1 if an API
    fails the standard."""
    from majob.precision.precheck import run_precheck
    from majob.precision.probe import require_msprobe
    from majob.precision.record import PRECISION_DIR
    from majob.precision.sources import resolve
    from majob.runner.runs import default_runs_dir
    from majob.text import printable

    require_msprobe()
    cache = Path.cwd() / PRECISION_DIR / "downloads"
    found = resolve(run, runs_dir or default_runs_dir(), cache, profile)
    if found.dump_dir is None:
        from majob.errors import UserInputError

        raise UserInputError(f"{run}: no msprobe dump in it", hint="run it with --dump first")
    label = re.sub(r"[^A-Za-z0-9_.-]+", "-", run).strip("-") or "dump"
    out = output or Path.cwd() / ".majob" / "precheck" / label
    typer.echo(f"pre-check of {printable(run)}: each API again on the CPU (msprobe's standard)")
    result = run_precheck(found.dump_dir, out, apis=apis)
    _show(result, top)
    if result.failed:
        raise typer.Exit(1)


def _show(result: Precheck, top: int) -> None:
    checked = len(result.verdicts) - result.count("skip")
    typer.echo(
        f"{checked} API calls checked: {result.count('pass')} pass, "
        f"{len(result.failed)} outside the standard, {result.count('skip')} skipped"
    )
    for verdict in result.failed[:top]:
        typer.echo(f"  {_line(verdict)}")
    if len(result.failed) > top:
        typer.echo(f"  ... {len(result.failed) - top} more (--top {len(result.failed)})")
    skipped = [v for v in result.verdicts if v.status == "skip"]
    for verdict in skipped[:3]:
        typer.echo(f"  skipped {verdict.api} ({verdict.where}): {verdict.message}")
    for path in result.result_csvs:
        typer.echo(f"msprobe's results: {path}")


def _line(verdict: ApiVerdict) -> str:
    def number(value: float | None) -> str:
        return "-" if value is None else f"{value:.3g}"

    return (
        f"{verdict.status:<7} {verdict.api} ({verdict.where}): max rel error "
        f"{number(verdict.max_rel_error)}, max abs error {number(verdict.max_abs_error)}, "
        f"cosine {number(verdict.cosine)}"
    )

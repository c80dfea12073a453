"""``majob runs``: list, show and clean the local stage's run directories (``.majob/runs``)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import user_errors
from majob.errors import UserInputError

if TYPE_CHECKING:
    from majob.runner.runs import RunInfo

runs_app = typer.Typer(
    name="runs",
    help="List, show and clean local runs (.majob/runs). After each `majob run`, runs beyond "
    "the newest 20 and older than 1 day are removed (MAJOB_RUNS_KEEP=N|all, "
    "MAJOB_RUNS_MAX_AGE=12h|7d...).",
    no_args_is_help=True,
)

RunsDir = Annotated[
    Path | None,
    typer.Option("--runs-dir", help="Where the runs are (default: ./.majob/runs)."),
]


def _runs_dir(given: Path | None) -> Path:
    from majob.runner.runs import default_runs_dir

    return given if given is not None else default_runs_dir()


def _when(moment: dt.datetime) -> str:
    return moment.astimezone().strftime("%Y-%m-%d %H:%M:%S")


def _took(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds:.1f}s"


@runs_app.command("list")
@user_errors
def list_(runs_dir: RunsDir = None) -> None:
    """Show the runs, newest first: id, spec, stage, result, start, duration, size."""
    from rich.console import Console
    from rich.table import Table

    from majob.runner.runs import list_runs
    from majob.text import counted, human_bytes

    where = _runs_dir(runs_dir)
    runs = list_runs(where)
    if not runs:
        typer.echo(f"no runs in {where}")
        return
    table = Table(box=None, header_style="bold", pad_edge=False, collapse_padding=True)
    # Only the spec name may be shortened on a narrow terminal; the rest keep their width.
    table.add_column("RUN ID", no_wrap=True, min_width=29)
    table.add_column("SPEC", no_wrap=True, overflow="ellipsis")
    table.add_column("STAGE", no_wrap=True, min_width=5)
    table.add_column("RESULT", no_wrap=True, min_width=6)
    table.add_column("STARTED", no_wrap=True, min_width=11)
    table.add_column("TOOK", justify="right", no_wrap=True, min_width=5)
    table.add_column("SIZE", justify="right", no_wrap=True, min_width=8)
    styles = {"passed": "green", "failed": "red", "timeout": "red", "error": "red"}
    for run in runs:
        table.add_row(
            run.run_id,
            run.spec_name,
            run.stage,
            f"[{styles.get(run.status, 'yellow')}]{run.status}[/]",
            run.started.astimezone().strftime("%m-%d %H:%M"),
            _took(run.duration),
            human_bytes(run.size),
        )
    console = Console()
    if not console.is_terminal:  # piped: the whole table, not one cut to 80 columns
        console = Console(width=max(console.width, 160))
    console.print(table)
    total = human_bytes(sum(r.size for r in runs))
    console.print(f"{counted(len(runs), 'run')}, {total} in {where}", highlight=False)


@runs_app.command("show")
@user_errors
def show(
    run_id: Annotated[
        str,
        typer.Argument(metavar="RUN_ID", help="A run id, a unique start of one, or 'latest'."),
    ],
    runs_dir: RunsDir = None,
) -> None:
    """Show one run's record: result, nodes and their logs, outputs and where they went."""
    from majob.runner.runs import find_run
    from majob.text import human_bytes

    run = find_run(_runs_dir(runs_dir), run_id)
    record = run.record
    lines = [
        f"run:      {run.run_id}",
        f"spec:     {run.spec_name} (stage {run.stage})",
        f"result:   {run.status}",
        f"started:  {_when(run.started)}, took {_took(run.duration)}",
        f"dir:      {run.path} ({human_bytes(run.size)})",
    ]
    if not run.complete:
        lines.append("record:   none (the run is still going, or was killed before it ended)")
    else:
        lines.append(f"record:   {run.path / 'record.json'}")
        if record.get("python"):
            lines.append(f"python:   {record['python']}")
        for node in record.get("nodes", []):
            lines.append(
                f"node:     {node.get('name')}: exit code {node.get('exit_code')}, "
                f"log {run.path / str(node.get('log'))}"
            )
        output_dirs = record.get("output_dirs", {})
        copies = {c.get("channel"): c for c in record.get("output_copies", [])}
        for output in record.get("outputs", []):
            channel, rel = output.get("channel"), output.get("path")
            copy = copies.get(channel, {})
            line = f"output:   {channel}: {Path(output_dirs.get(channel, '?')) / str(rel)}"
            if rel in copy.get("kept", []):
                line += f" (kept the differing {Path(copy['target']) / str(rel)})"
            elif rel in copy.get("copied", []):
                line += f" -> {Path(copy['target']) / str(rel)}"
            lines.append(line)
        lines += [f"notice:   {notice}" for notice in record.get("notices", [])]
        for finding in record.get("guard", []):
            where = finding.get("where") or "(not from the code dir)"
            lines.append(f"guard:    {where}: {finding.get('kind')}s {finding.get('path')}")
    for line in lines:
        typer.echo(line)


@runs_app.command("clean")
@user_errors
def clean(
    keep: Annotated[
        int | None,
        typer.Option(
            "--keep", min=0, help="Keep the newest N runs (default: MAJOB_RUNS_KEEP, 20)."
        ),
    ] = None,
    older_than: Annotated[
        str | None,
        typer.Option(
            "--older-than",
            help="Remove only runs older than this, e.g. 12h, 7d (default: MAJOB_RUNS_MAX_AGE, "
            "1d).",
        ),
    ] = None,
    all_: Annotated[
        bool,
        typer.Option(
            "--all",
            help="Remove every finished run, whatever its age (runs without a "
            "record are kept for a day: they may still be going).",
        ),
    ] = False,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Say what would be removed; remove nothing.")
    ] = False,
    runs_dir: RunsDir = None,
) -> None:
    """Remove old runs: all but the newest --keep that are older than --older-than."""
    from majob.runner.runs import list_runs, remove_runs, select_old
    from majob.text import counted, human_bytes

    count, max_age = _kept(keep, older_than, all_)
    where = _runs_dir(runs_dir)
    runs = list_runs(where)
    old = select_old(runs, keep=count, max_age=max_age, now=dt.datetime.now(dt.timezone.utc))
    if not old:
        typer.echo(f"nothing to remove: {counted(len(runs), 'run')} in {where}, all kept")
        return
    verb = "would remove" if dry_run else "removed"
    gone: list[RunInfo] = old if dry_run else remove_runs(old)
    for run in gone:
        typer.echo(f"{verb} {run.run_id} ({run.status}, {human_bytes(run.size)})")
    freed = human_bytes(sum(r.size for r in gone))
    typer.echo(
        f"{verb} {counted(len(gone), 'run')} ({freed}); kept {len(runs) - len(gone)} in {where}"
    )
    if len(gone) < len(old):
        raise UserInputError(
            f"could not remove {counted(len(old) - len(gone), 'run')}",
            hint=f"check the permissions under {where}",
        )


def _kept(keep: int | None, older_than: str | None, all_: bool) -> tuple[int, int | None]:
    """How many of the newest runs are kept, and the age (seconds) past which the others go:
    the options, else MAJOB_RUNS_KEEP and MAJOB_RUNS_MAX_AGE, else the defaults."""
    from majob.runner.runs import Retention
    from majob.spec.durations import parse_duration

    if all_ and (keep is not None or older_than is not None):
        raise UserInputError("--all removes every run: leave out --keep and --older-than")
    policy = Retention.from_env() or Retention()  # read (and checked) even for --all
    if all_:
        return 0, None
    max_age: int | None = policy.max_age
    if older_than is not None:
        try:
            max_age = parse_duration(older_than)
        except ValueError as error:
            raise UserInputError(f"--older-than {older_than!r}: {error}") from None
    return (policy.keep if keep is None else keep), max_age

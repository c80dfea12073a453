"""``majob perf TARGET [TARGET_B]``: where a training step's time goes and what to change."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from majob.cli.common import ProfileOption, RunsDirOption, user_errors

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""


@commands.command()
@user_errors
def perf(
    targets: Annotated[
        list[str],
        typer.Argument(
            help="A profile: a directory, a run id, an obs:// path or a job id/name. Two: "
            "compare B against A.",
            show_default=False,
        ),
    ],
    format_: Annotated[
        Literal["table", "json"], typer.Option("--format", help="table or json.")
    ] = "table",
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write an HTML report to this file.")
    ] = None,
    threshold: Annotated[
        float,
        typer.Option(
            "--threshold", min=0, max=1, help="Exit 1 when a finding saves this share of a step."
        ),
    ] = 0.05,
    msprof: Annotated[
        bool, typer.Option("--msprof/--no-msprof", help="Run msprof-analyze when installed.")
    ] = True,
    runs_dir: RunsDirOption = None,
    profile: ProfileOption = None,
) -> None:
    """Where a training step's time goes and what to change: findings ranked by time saved.

    Step time p50/p95, each profiled step's breakdown (data, forward, backward, optimizer,
    syncs, GC, gaps), majob's findings and msprof-analyze's. Exit 1 when a finding saves at
    least --threshold of a step, 2 for bad input."""
    import tempfile

    from majob.errors import UserInputError
    from majob.perf import advisor
    from majob.perf.report import diagnose
    from majob.pipeline.perf_target import record_diagnosis, resolve_target
    from majob.runner.runs import default_runs_dir

    if len(targets) > 2:
        raise UserInputError("majob perf takes one profile, or two to compare")
    resolved = [resolve_target(text, runs_dir or default_runs_dir(), profile) for text in targets]
    with tempfile.TemporaryDirectory(prefix="majob-perf-") as scratch:
        diagnoses = [
            diagnose(t.target.label, t.target.path, Path(scratch) / str(i), run_advisor=msprof)
            for i, t in enumerate(resolved)
        ]
        if len(diagnoses) == 2:
            _compare(diagnoses[0], diagnoses[1], format_, html)
            return
        _show(diagnoses[0], format_, html, installed=advisor.installed() or not msprof)
    note = record_diagnosis(resolved[0], diagnoses[0], "majob perf")
    if note:
        typer.echo(f"note: {note}", err=True)
    if diagnoses[0].above(threshold):
        raise typer.Exit(1)


def _show(diagnosis: Diagnosis, format_: str, html: Path | None, *, installed: bool) -> None:
    import json

    from majob.perf.report import to_json

    if html is not None:
        from majob.perf.html import render

        html.write_text(render(diagnosis), encoding="utf-8")
    if format_ == "json":
        typer.echo(json.dumps(to_json(diagnosis), indent=2))
    else:
        from majob.cli.perf_show import show

        show(diagnosis, installed=installed)


def _compare(a: Diagnosis, b: Diagnosis, format_: str, html: Path | None) -> None:
    import json

    from majob.perf.compare import compare, compare_json

    comparison = compare(a, b)
    if html is not None:
        from majob.perf.html import render_comparison

        html.write_text(render_comparison(comparison), encoding="utf-8")
    if format_ == "json":
        typer.echo(json.dumps(compare_json(comparison), indent=2))
    else:
        from majob.cli.perf_show import show_comparison

        show_comparison(comparison)

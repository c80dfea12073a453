"""``majob perf TARGET [TARGET_B]``: where a training step's time goes and what to change."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from majob.cli.common import ProfileOption, user_errors

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis
    from majob.perf.targets import Target

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
    runs_dir: Annotated[
        Path | None,
        typer.Option("--runs-dir", help="Where run records are (default: ./.majob/runs)."),
    ] = None,
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

    if len(targets) > 2:
        raise UserInputError("majob perf takes one profile, or two to compare")
    resolved = [_resolve(text, runs_dir, profile) for text in targets]
    with tempfile.TemporaryDirectory(prefix="majob-perf-") as scratch:
        diagnoses = [
            diagnose(t.label, t.path, Path(scratch) / str(i), run_advisor=msprof)
            for i, t in enumerate(resolved)
        ]
        if len(diagnoses) == 2:
            _compare(diagnoses[0], diagnoses[1], format_, html)
            return
        _show(diagnoses[0], format_, html, installed=advisor.installed() or not msprof)
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


def _resolve(text: str, runs_dir: Path | None, profile: str | None) -> Target:
    """``text`` as a local profile directory: a directory, run id or obs:// path; else a job
    of the service, whose output the ledger names."""
    from majob.errors import MajobError, UserInputError
    from majob.perf.targets import PERF_DIR, resolve
    from majob.runner.runs import default_runs_dir

    cache = Path.cwd() / PERF_DIR / "downloads"
    try:
        return resolve(text, runs_dir or default_runs_dir(), cache, profile)
    except UserInputError as error:
        if "/" in text or text.startswith("."):
            raise
        local = error
    try:
        return _job_target(text, cache, profile)
    except MajobError as error:
        raise UserInputError(
            f"{text}: {local.message}; as a job: {error.message}",
            hint="give a profile directory, a run id, an obs:// path or a job id/name",
        ) from None


def _job_target(ref: str, cache: Path, profile: str | None) -> Target:
    """The profile of the cloud job ``ref``: its stage's output on OBS, as the ledger recorded
    the spec it ran (``<output>/<stage>/profiling/``, else ``<output>/profiling/``)."""
    from majob.errors import UserInputError
    from majob.perf.targets import Target, download
    from majob.pipeline.ledger import Ledger
    from majob.service.connect import open_service
    from majob.service.lookup import find_job
    from majob.spec.profiles import load_profile

    service = open_service(load_profile(profile))
    try:
        job = find_job(service, ref).job
    finally:
        service.close()
    with Ledger() as ledger:
        record = ledger.by_job(job.id)
    outputs = record.spec_json.get("outputs") if record is not None else None
    first = outputs[0] if isinstance(outputs, list) and outputs else None
    obs = first.get("obs") if isinstance(first, dict) else None
    if record is None or not isinstance(obs, str):
        raise UserInputError(
            f"job {job.name} ({job.id}): majob has no record of where its outputs went",
            hint="give the job's output path: majob perf obs://BUCKET/.../profiling/",
        )
    base = obs if obs.endswith("/") else obs + "/"
    for candidate in (f"{base}{record.stage}/profiling/", f"{base}profiling/"):
        try:
            return Target(f"{ref} ({record.stage})", download(candidate, cache, profile))
        except UserInputError:
            continue
    raise UserInputError(
        f"job {job.name} ({job.id}): no profiling data in its output {obs}",
        hint="profile it: `majob submit SPEC --perf` (or `majob pipeline SPEC --perf`)",
    )

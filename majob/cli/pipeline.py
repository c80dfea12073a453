"""``majob pipeline``, ``majob history``, ``majob checklist``: the staged pipeline and its ledger.

The pipeline, the service clients and rich are imported inside the command bodies.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import (
    LedgerOption,
    ProfileOption,
    ResumeFromOption,
    SetOption,
    sigterm_as_ctrl_c,
    user_errors,
    warn_about_sets,
)
from majob.errors import MajobError, UserInputError

if TYPE_CHECKING:
    from majob.pipeline.flow import Pipeline
    from majob.pipeline.ledger import Ledger
    from majob.pipeline.ledger_schema import StageRecord
    from majob.spec.models import Stage
    from majob.storage.base import ObjectStore

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""

SpecArgument = Annotated[Path, typer.Argument(metavar="SPEC", help="The job spec (YAML).")]
PerfOption = Annotated[
    bool,
    typer.Option(
        "--perf",
        help="Profile each stage as the spec's `perf:` says, into its first output's "
        "profiling/ folder (the cloud stages' code staged with majob's bootstrap).",
    ),
]


@commands.command("pipeline")
@user_errors
def pipeline(
    spec: SpecArgument,
    until: Annotated[
        str, typer.Option("--until", help="Last stage to run: local, debug or formal.")
    ] = "formal",
    start: Annotated[
        str,
        typer.Option(
            "--from",
            help="First stage to run; its gate needs the stage before it passed for this "
            "code and spec (or --force).",
        ),
    ] = "local",
    force: Annotated[
        bool, typer.Option("--force", help="Run --from's stage though its gate is closed.")
    ] = False,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why --force (kept in the ledger).")
    ] = None,
    upload_inputs: Annotated[
        bool,
        typer.Option("--upload-inputs", help="Upload each input's local stand-in to its OBS path."),
    ] = False,
    overrides: SetOption = None,
    profile: ProfileOption = None,
    ledger: LedgerOption = None,
    resume_from: ResumeFromOption = None,
    perf: PerfOption = False,
) -> None:
    """Run local → debug → formal, each after the one before passed; re-runs skip passed stages.

    A stage passed only for the same code and spec counts; a re-run skips what already passed.
    Each cloud stage writes under its own folder of every output (<output obs>/<stage>/);
    --resume-from gives each cloud stage it runs SOURCE's checkpoints."""
    from majob.service.connect import naming_profile

    _check_force(force, reason, start)
    runner = _pipeline(spec, profile, overrides or [], ledger, upload_inputs, resume_from, perf)
    warn_about_sets(runner.spec, overrides, _stages_between(start, until))
    # A cloud stage's configuration error names the profile, as submit's does (the spec file
    # was loaded with the profile, so naming it loads nothing more).
    named = naming_profile(runner.profile, chosen=profile is not None)
    try:
        with sigterm_as_ctrl_c(), runner, named:
            result = runner.run(until, start=start, force_reason=reason if force else None)
    except KeyboardInterrupt:
        typer.echo(
            "interrupted: the ledger keeps what passed; a cloud job keeps running and the next "
            "`majob pipeline` follows it",
            err=True,
        )
        raise typer.Exit(130) from None
    if not result.ok:
        raise typer.Exit(1)


def _pipeline(
    spec: Path,
    profile: str | None,
    overrides: list[str],
    ledger: Path | None,
    upload: bool,
    resume_from: str | None = None,
    perf: bool = False,
) -> Pipeline:
    """The pipeline the command runs, drawing the CLI's live status line (the command warns
    about its --set flags itself, for the stages it runs)."""
    from majob.cli.follow import live_status
    from majob.pipeline.flow import Pipeline

    return Pipeline(
        spec,
        profile=profile,
        overrides=overrides,
        ledger=ledger,
        upload_inputs=upload,
        live=live_status,
        warn=False,
        resume_from=resume_from,
        perf=perf,
    )


def _check_force(force: bool, reason: str | None, start: str) -> None:
    """--force and --reason go together, and --force names the gate it overrides."""
    if force and not reason:
        raise UserInputError("--force needs --reason '...': the override is kept in the ledger")
    if reason and not force:
        raise UserInputError("--reason goes with --force")
    if force and start == "local":
        raise UserInputError("--force overrides a gate: name the stage with --from debug|formal")


def _stages_between(start: str, until: str) -> list[Stage]:
    """The stages a pipeline from ``start`` to ``until`` may run (all, when either is not a
    stage: the run itself says so)."""
    from majob.spec.models import STAGES

    if start in STAGES and until in STAGES:
        return list(STAGES[STAGES.index(start) : STAGES.index(until) + 1])
    return list(STAGES)


def _history_table(records: list[object], title: str) -> None:
    from rich.console import Console
    from rich.table import Table

    from majob.pipeline.ledger_schema import StageRecord

    table = Table(title=title, title_justify="left")
    for column in (
        "#",
        "spec",
        "stage",
        "result",
        "spec#",
        "code#",
        "job",
        "duration",
        "step p50",
        "metrics",
        "when",
    ):
        table.add_column(column, overflow="fold")
    for record in records:
        assert isinstance(record, StageRecord)
        from majob.pipeline.metrics import summary

        metrics = ", ".join(f"{k} {v:g}" for k, v in summary(record.metrics).items())
        result = record.effective_result
        if result == "running" and record.elsewhere:
            result += f" on {record.host}"
        if record.override:
            result += " (forced)"
        table.add_row(
            str(record.id),
            record.spec_name,
            record.stage,
            result,
            record.spec_digest[:8],
            record.code_digest[:8],
            record.job_id[:8] or "-",
            f"{record.duration:.1f}s" if record.duration is not None else "-",
            f"{record.step_p50_ms:.1f} ms" if record.step_p50_ms is not None else "-",
            metrics or "-",
            record.started_at.replace("T", " ").replace("+00:00", "Z"),
        )
    console = Console(highlight=False, soft_wrap=True)
    if not console.is_terminal:
        console.width = 200
    console.print(table)


@commands.command("history")
@user_errors
def history(
    spec: Annotated[
        Path | None, typer.Argument(metavar="[SPEC]", help="Only this spec's records.")
    ] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, help="Newest N records.")] = 20,
    output: Annotated[str, typer.Option("--format", help="table or json.")] = "table",
    ledger: LedgerOption = None,
) -> None:
    """The ledger: each stage run with its result, digests, job, duration and metrics."""
    from majob.pipeline.ledger import Ledger

    if output not in ("table", "json"):
        raise UserInputError(f"--format {output!r}: choose table or json")
    name = None
    if spec is not None:
        from majob.spec.load import load_spec

        name = load_spec(spec, check_files=False).name
    with Ledger(ledger, spec_file=spec) as opened:
        records = opened.records(name, limit=limit)
        path = opened.path
        slower = _slower_lines(opened, records)
    if output == "json":
        typer.echo(json.dumps(_history_rows(records), indent=2))
        return
    if not records:
        typer.echo(f"no stage has run yet{f' for {name}' if name else ''} ({path})")
        return
    _history_table(list(records), f"ledger {path}")
    for record in records:
        result = record.effective_result
        if result in ("failed", "refused") and record.reason:
            typer.echo(f"#{record.id} {record.stage} {result}: {record.reason}")
        if record.adopted_at:  # its pipeline was killed; a re-run followed and judged its job
            typer.echo(f"#{record.id} {record.stage} adopted by a re-run at {record.adopted_at}")
        if record.override:
            typer.echo(f"#{record.id} {record.stage} forced: {record.override}")
    for line in slower:
        typer.echo(line)


def _history_rows(records: list[StageRecord]) -> list[dict[str, object]]:
    """``majob history --format json``: one object per record."""
    return [
        {
            "id": r.id,
            "spec": r.spec_name,
            "stage": r.stage,
            "result": r.effective_result,
            "reason": r.reason,
            "spec_digest": r.spec_digest,
            "code_digest": r.code_digest,
            "job_id": r.job_id,
            "duration": r.duration,
            "metrics": r.metrics,
            "outputs": list(r.outputs),
            "override": r.override,
            "majob_version": r.majob_version,
            "started_at": r.started_at,
            "host": r.host,
            "adopted_at": r.adopted_at,
            "step_p50_ms": r.step_p50_ms,
            "step_p95_ms": r.step_p95_ms,
        }
        for r in records
    ]


def _slower_lines(ledger: Ledger, records: list[StageRecord]) -> list[str]:
    """A line for each formal record more than 20% slower per step than the formal run before."""
    from majob.pipeline.steptime import slower_line, slower_than_last

    lines: list[str] = []
    formal: dict[str, list[StageRecord]] = {}
    for record in records:
        if record.stage != "formal" or not record.step_p50_ms:
            continue
        if record.spec_name not in formal:
            formal[record.spec_name] = ledger.records(record.spec_name, stage="formal")
        found = slower_than_last(record, formal[record.spec_name])
        if found is not None:
            lines.append(slower_line(record, *found))
    return lines


@commands.command("checklist")
@user_errors
def checklist(
    spec: SpecArgument,
    output: Annotated[str, typer.Option("--format", help="text or json.")] = "text",
    overrides: SetOption = None,
    profile: ProfileOption = None,
    ledger: LedgerOption = None,
) -> None:
    """The migration checklist: each item's status from majob check, the spec and the ledger."""
    from majob.pipeline.checklist import checklist as make_checklist
    from majob.pipeline.ledger import Ledger
    from majob.spec.load import load_spec

    if output not in ("text", "json"):
        raise UserInputError(f"--format {output!r}: choose text or json")
    loaded = load_spec(spec, overrides=overrides or [], profile=profile)
    with Ledger(ledger, spec_file=spec) as opened, _store_or_none(profile) as store:
        items = make_checklist(loaded, opened, str(spec), store=store)
    if output == "json":
        typer.echo(json.dumps([item.to_dict() for item in items], indent=2))
        return
    marks = {"done": "[x]", "todo": "[ ]", "not needed": "[-]", "not checked": "[?]"}
    for item in items:
        typer.echo(f"{marks[item.status]} {item.title}: {item.status}; {item.detail}")
        if item.todo:
            typer.echo(f"      to do: {item.todo}")


@contextmanager
def _store_or_none(profile: str | None) -> Iterator[ObjectStore | None]:
    """The profile's OBS for the checklist's data plan; None when it cannot be opened (the
    item then says it is not checked)."""
    from majob.service.connect import open_store
    from majob.spec.profiles import load_profile

    try:
        store = open_store(load_profile(profile))
    except MajobError:
        yield None
        return
    try:
        yield store
    finally:
        store.close()

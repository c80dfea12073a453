"""``majob submit``: check a spec, upload its code, create its job exactly once; with
``--wait``, follow it and record its stage in the ledger as ``majob pipeline`` does.

The service submits (``majob.service.submit``), the pipeline judges and records
(``majob.pipeline.judge``, ``majob.pipeline.record``): this module only wires them to the
terminal. ``majob run --stage debug|formal`` is ``majob submit --wait`` (``submit_and_wait``).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import (
    LedgerOption,
    ProfileOption,
    ResumeFromOption,
    SetOption,
    SpecFileArgument,
    sigterm_as_ctrl_c,
    user_errors,
    warn_about_sets,
)
from majob.cli.dumpkind import DumpWhatArgument, dump_kind, dump_line, with_grad
from majob.cli.follow import follow_job
from majob.cli.jobtext import phase_text
from majob.errors import UserInputError

if TYPE_CHECKING:
    from majob.pipeline.digests import Fingerprint
    from majob.pipeline.ledger import Ledger
    from majob.pipeline.record import StageRecorder
    from majob.service.base import Job
    from majob.service.connect import ServiceSource
    from majob.service.submit import SubmitPlan
    from majob.spec.models import JobSpec, Stage
    from majob.spec.profiles import Profile

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""


# The options of `majob submit`, spelled here so that the command reads as what it does.
StageOption = Annotated[str, typer.Option("--stage", help="debug (a short job) or formal.")]
DryRunOption = Annotated[
    bool, typer.Option("--dry-run", help="Print what would be uploaded and the body; send nothing.")
]
WaitOption = Annotated[
    bool, typer.Option("--wait", help="Follow the job to its end; exit 0 only if it completes.")
]
UploadInputsOption = Annotated[
    bool,
    typer.Option(
        "--upload-inputs", help="Upload each input's local stand-in to its OBS path first."
    ),
]
DumpOption = Annotated[
    bool,
    typer.Option(
        "--dump",
        help="Dump with msprobe as the spec's `precision:` says, into the first output "
        "(uploaded with it); the code is staged with majob's bootstrap, yours is unchanged.",
    ),
]
PerfOption = Annotated[
    bool,
    typer.Option(
        "--perf",
        help="Profile the steps the spec's `perf:` names into the first output's profiling/ "
        "folder (uploaded with it); the code is staged with majob's bootstrap, yours is unchanged.",
    ),
]
ForceOption = Annotated[
    bool,
    typer.Option(
        "--force", help="Submit formal though debug has not passed for this code and spec."
    ),
]
ReasonOption = Annotated[
    str | None, typer.Option("--reason", help="Why --force (kept in the ledger).")
]


@commands.command()
@user_errors
def submit(
    spec: SpecFileArgument,
    what: DumpWhatArgument = None,
    stage: StageOption = "debug",
    dry_run: DryRunOption = False,
    wait: WaitOption = False,
    upload_inputs: UploadInputsOption = False,
    set_: SetOption = None,
    profile: ProfileOption = None,
    dump: DumpOption = False,
    perf: PerfOption = False,
    force: ForceOption = False,
    reason: ReasonOption = None,
    ledger_path: LedgerOption = None,
    resume_from: ResumeFromOption = None,
) -> None:
    """Check SPEC, upload its code, and create the ModelArts training job (exactly once).

    formal needs the debug stage passed for the same code and spec (or --force --reason); a
    submit that waits records its stage in the ledger, as `majob pipeline` does. The job writes
    under its stage's own folder of every output (<output obs>/<stage>/)."""
    from majob.cli.dryrun import print_dry_run
    from majob.pipeline.digests import Fingerprint
    from majob.pipeline.ledger import Ledger
    from majob.service.connect import naming_profile
    from majob.service.submit import cloud_stage
    from majob.spec.profiles import load_profile

    spec, grad = dump_kind(spec, what, dump, "submit")
    _check_flags(reason, force, dump, perf)
    chosen = cloud_stage(stage)
    selected = load_profile(profile)
    # The boot file and the stand-ins are checked by the pre-flight, with everything else.
    job_spec = _load(spec, set_, selected, chosen, grad)
    perf = _profiled(job_spec, chosen, perf, dump)
    _warn_engine(job_spec, spec)
    # A SIGTERM while it waits ends it as Ctrl-C does: the job keeps running, majob says how
    # to follow it, and the record says interrupted (left to its default, it died silently).
    with sigterm_as_ctrl_c(), Ledger(ledger_path, spec_file=spec) as ledger:
        # The gate and the record are about the user's code, so they come before any dump
        # staging; one scan of it makes the fingerprint, the submit id and the upload.
        fingerprint = Fingerprint.of(job_spec)
        if dry_run:
            plan = _plan(job_spec, chosen, fingerprint, dump, resume_from, perf)
            print_dry_run(plan, selected, upload_inputs, (ledger, fingerprint))
            return
        forced = (reason or "") if force else None
        override = _override(ledger, job_spec, fingerprint, chosen, forced, spec)
        plan = _plan(job_spec, chosen, fingerprint, dump, resume_from, perf)
        recorder = (
            _recorder(ledger, job_spec, chosen, fingerprint, spec, override)
            if wait and not dump  # a dump run is a precision run, not the stage itself
            else None
        )
        with naming_profile(selected, chosen=profile is not None):
            code = _submit(plan, job_spec, selected, upload_inputs, wait, recorder, perf)
    if code:
        raise typer.Exit(code)
    _say_where(job_spec, chosen, dump, perf)


def _load(
    spec: Path, overrides: list[str] | None, profile: Profile, stage: Stage, grad: bool
) -> JobSpec:
    """The spec as submit runs it (``--dump grad``: with ``precision.grad``)."""
    from majob.spec.load import load_spec

    job = load_spec(spec, overrides=overrides or (), profile=profile, check_files="code_dir")
    warn_about_sets(job, overrides, [stage])
    return with_grad(job) if grad else job


def _profiled(spec: JobSpec, stage: Stage, perf: bool, dump: bool) -> bool:
    """``--perf``, or the spec's ``expect.perf`` names the stage (not for a dump run)."""
    from majob.pipeline.perfstage import stage_profiled

    return perf or (not dump and stage_profiled(spec, stage, False))


def _check_flags(reason: str | None, force: bool, dump: bool, perf: bool) -> None:
    if reason is not None and not force:
        raise UserInputError("--reason goes with --force")
    if perf and dump:
        raise UserInputError("--perf and --dump: profile and dump in separate jobs")


def _say_where(spec: JobSpec, stage: Stage, dump: bool, perf: bool) -> None:
    """Where a dumped or profiled job's data is, once its outputs are uploaded."""
    if dump:
        typer.echo(dump_line(spec, stage))
    if perf:
        from majob.perf.staging import profile_line

        typer.echo(profile_line(spec, stage))


def _warn_engine(spec: JobSpec, spec_file: Path) -> None:
    from majob.image.compat import engine_warning
    from majob.spec.load import display_path

    warning = engine_warning(spec, display_path(spec_file))
    if warning:
        sys.stderr.write(f"warning: {warning}\n")


def _override(
    ledger: Ledger,
    spec: JobSpec,
    fingerprint: Fingerprint,
    stage: Stage,
    reason: str | None,
    spec_file: Path,
) -> str:
    from majob.pipeline.gate import override_for

    override = override_for(ledger, spec, fingerprint, stage, reason, str(spec_file))
    if override:
        typer.echo(f"[majob] formal: gate overridden; reason: {override}")
    return override


def _plan(
    spec: JobSpec,
    stage: Stage,
    fingerprint: Fingerprint,
    dump: bool,
    resume_from: str | None,
    perf: bool = False,
) -> SubmitPlan:
    from majob.service.submit import plan_submit

    if not dump and not perf:
        return plan_submit(spec, stage, files=fingerprint.files, resume_from=resume_from)
    from majob.spec.digest import cloud_spec_digest

    # The staged copy (the user's code and majob's bootstrap) is what goes up: scanned anew.
    if perf:
        from majob.perf.staging import staged_for_perf

        staged = staged_for_perf(
            spec, Path.cwd() / ".majob" / "perf" / "staging" / spec.name, stage
        )
    else:
        from majob.precision.record import PRECISION_DIR
        from majob.precision.staging import staged_for_dump

        staging = Path.cwd() / PRECISION_DIR / "staging" / spec.name
        staged = staged_for_dump(spec, staging, stage)
    # A staged run is a run of the stage: its checkpoint folder is the stage's, for the user's spec.
    return plan_submit(staged, stage, resume_from=resume_from, digest=cloud_spec_digest(spec))


def _recorder(
    ledger: Ledger,
    spec: JobSpec,
    stage: Stage,
    fingerprint: Fingerprint,
    spec_file: Path,
    override: str,
) -> StageRecorder:
    from majob.pipeline.record import StageRecorder

    return StageRecorder(
        ledger, spec.name, stage, fingerprint, spec_path=str(spec_file.resolve()), override=override
    )


def _submit(
    plan: SubmitPlan,
    spec: JobSpec,
    profile: Profile,
    upload_inputs: bool,
    wait: bool,
    recorder: StageRecorder | None,
    perf: bool,
) -> int:
    """Submit ``plan``; with ``wait``, follow the job (and record its stage; ``perf``: with its
    profile's diagnosis); the exit code."""
    from majob.pipeline.adopt import adopt
    from majob.service.connect import ServiceSource, console_url
    from majob.service.submit import submit_plan

    source = ServiceSource(profile)
    try:
        # Waited for and recorded: the job a killed `submit --wait` (or pipeline) left for this
        # stage, code and spec is adopted, not submitted twice (pipeline/adopt.py).
        job = adopt(recorder, source, plan, typer.echo) if recorder is not None else None
        if job is not None:
            typer.echo(
                f"adopted job {job.id} ({job.name}), left by the last run: {phase_text(job)}"
            )
        else:
            job = submit_plan(
                plan, profile, service=source, upload_inputs=upload_inputs, report=typer.echo
            )
            typer.echo(f"submitted job {job.id} ({job.name}): {phase_text(job)}")
        url = console_url(profile)
        if url:
            typer.echo(f"console: {url}")
        if not wait:
            typer.echo(f"follow it: majob logs {job.id} --follow   status: majob status {job.id}")
            return 0
        if recorder is None:  # followed, not judged: a dump run's phase is its exit code
            from majob.pipeline.metrics import MetricReader

            metrics = MetricReader(spec.metrics)
            code, _ = follow_job(
                source,
                job,
                reconnect=source.reconnect,
                also_line=metrics.feed,
                masker=spec.from_environ.masker(),
                profile=profile.name,
                metrics=metrics,
            )
            return code
        return _follow_and_record(source, job, spec, plan.stage, profile, recorder, perf)
    finally:
        source.close()


def _follow_and_record(
    source: ServiceSource,
    job: Job,
    spec: JobSpec,
    stage: Stage,
    profile: Profile,
    recorder: StageRecorder,
    perf: bool,
) -> int:
    """Follow ``job``, judge its stage as the pipeline does and record it; the exit code."""
    from majob.pipeline.judge import judge_job
    from majob.pipeline.likegate import judge_checks, keep_verdict
    from majob.pipeline.perfstage import diagnosis_lines, profiled_outcome
    from majob.pipeline.stages import StageLog

    if recorder.record_id is None:  # else adopted: the killed run's record, now this one's
        recorder.start()
    recorder.job(job.id)
    log = StageLog(spec, report=lambda line: None)  # follow_job shows each line
    started = time.monotonic()
    code, waited = follow_job(
        source,
        job,
        reconnect=source.reconnect,
        also_line=log,
        masker=spec.from_environ.masker(),
        profile=profile.name,
        metrics=log.reader,
    )
    if waited is None:  # Ctrl-C, or the service stayed away: the next pipeline follows the job
        recorder.stopped("interrupted")
        return code
    outcome = log.ended(judge_job(spec, stage, profile, waited), started)
    outcome, gate = judge_checks(spec, stage, outcome, recorder)
    if perf:
        outcome, found = profiled_outcome(spec, stage, outcome, profile, recorder, "majob submit")
        typer.echo("\n".join(f"[majob] {line}" for line in diagnosis_lines(found)))
    recorder.finish(outcome)
    keep_verdict(recorder, gate, typer.echo)
    if not outcome.passed:
        if waited.job.succeeded:  # else follow_job has said how the job ended
            sys.stderr.write(f"error: the {stage} stage failed: {outcome.reason}\n")
        return 1
    opened = " (the formal gate is open for this code and spec)" if stage == "debug" else ""
    typer.echo(f"[majob] {stage} passed: ledger record #{recorder.record_id}{opened}")
    if outcome.step_ms is not None:  # a --perf job's step files, read back from OBS
        p50, p95 = outcome.step_ms
        typer.echo(f"[majob] step time p50 {p50:.1f} ms, p95 {p95:.1f} ms")
    return 0


def submit_and_wait(spec: Path, stage: str, overrides: list[str], profile: str | None) -> None:
    """``majob run --stage debug|formal``: the same path as ``majob submit --wait``."""
    submit(
        spec,
        stage=stage,
        dry_run=False,
        wait=True,
        upload_inputs=False,
        set_=overrides,
        profile=profile,
    )


def validate_online(spec: Path, stage: str, overrides: list[str], profile: str | None) -> list[str]:
    """``majob validate --online``: submit's pre-flight problems for SPEC, nothing sent."""
    from majob.service.connect import ServiceSource, naming_profile, open_store
    from majob.service.submit import Submitter, cloud_stage, plan_submit
    from majob.spec.load import load_spec
    from majob.spec.profiles import load_profile

    chosen = cloud_stage(stage)
    selected = load_profile(profile)
    job_spec = load_spec(spec, overrides=overrides, profile=selected, check_files="code_dir")
    plan = plan_submit(job_spec, chosen)
    source = ServiceSource(selected)
    try:
        with naming_profile(selected, chosen=profile is not None):
            store = open_store(selected)
            try:
                return Submitter(source(), store, selected).preflight(plan, upload_inputs=False)
            finally:
                store.close()
    finally:
        source.close()

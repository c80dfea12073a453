"""``majob submit``, ``status``, ``logs``, ``list``, ``stop``, ``delete``, ``flavors``, ``engines``.

JOB is a job id or a unique job name. The service client, the OBS store and rich are imported
inside the command bodies: ``majob --help`` must not load huaweicloudsdk* or esdk-obs.
"""

from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import ProfileOption, SetOption, user_errors
from majob.errors import ServiceNotFound, UserInputError
from majob.text import counted

if TYPE_CHECKING:
    from rich.console import Console
    from rich.table import Table

    from majob.masking import Masker
    from majob.pipeline.by_hand import StageByHand
    from majob.service.base import Job, TrainingService
    from majob.service.connect import ServiceSource
    from majob.service.offerings import Offerings
    from majob.service.submit import SubmitPlan
    from majob.service.watch import WaitResult
    from majob.spec.profiles import Profile

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""

JobArgument = Annotated[str, typer.Argument(metavar="JOB", help="Job id or unique job name.")]
_UUID = re.compile(
    r"^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$"
)


def _console(stderr: bool = False) -> Console:
    from rich.console import Console

    return Console(stderr=stderr, highlight=False, soft_wrap=True)


def _print_table(table: Table) -> None:
    """A table on the terminal fits it; piped, it is never wrapped (ids stay whole)."""
    console = _console()
    if not console.is_terminal:
        console.width = 240
    console.print(table)


def _profile(name: str | None) -> Profile:
    from majob.spec.profiles import load_profile

    return load_profile(name)


def resolve_job(service: TrainingService, ref: str) -> Job:
    """The job ``ref`` names: an id, else the one job of that exact name."""
    from majob.service.base import JobFilter

    if _UUID.match(ref):
        try:
            return service.get(ref)
        except ServiceNotFound:
            pass
    jobs, _ = service.search(JobFilter(name=ref), limit=50)
    named = [job for job in jobs if job.name == ref]
    if not named:
        raise ServiceNotFound(
            f"no job has the id or name {ref!r}", hint="`majob list` shows the jobs"
        )
    if len(named) > 1:
        listed = ", ".join(f"{job.id} ({job.phase})" for job in named[:10])
        raise UserInputError(
            f"{len(named)} jobs are named {ref!r}: {listed}", hint="pass the job id instead"
        )
    return named[0]


def _seconds(ms: int) -> str:
    seconds = ms // 1000
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


def _when(ms: int | None) -> str:
    if not ms:
        return "-"
    import datetime

    return datetime.datetime.fromtimestamp(ms / 1000).strftime("%Y-%m-%d %H:%M:%S")


def _phase_text(job: Job) -> str:
    extra = f" ({job.secondary_phase})" if job.secondary_phase not in ("", job.phase) else ""
    return f"{job.phase}{extra}"


# -- submit ----------------------------------------------------------------------------------


def _print_dry_run(
    plan: SubmitPlan, profile: Profile, upload_inputs: bool, gate_line: str = ""
) -> None:
    from majob.service.connect import open_store
    from majob.storage.sync import make_plan

    out = typer.echo
    code_obs = plan.spec.code.obs
    out(f"dry run: nothing is uploaded or created ({plan.stage} stage, job {plan.job_name})")
    for problem in plan.problems:
        out(f"problem: {problem}")
    if gate_line:
        out(gate_line)
    if code_obs is not None:
        try:
            store = open_store(profile)
            try:
                sync = make_plan(
                    store,
                    Path(plan.spec.code.dir),
                    code_obs,
                    ignore=plan.spec.code.ignore,
                    delete=True,
                )
            finally:
                store.close()
            count = f"{len(sync.uploads)} of {counted(len(plan.code_files), 'file')}"
            out(f"code: {count} to upload to {code_obs}")
            for upload in sync.uploads:
                out(f"  {upload.reason:7} {upload.file.rel} ({upload.file.size} bytes)")
            if sync.extraneous:
                extra = counted(len(sync.extraneous), "object")
                out(f"  and {extra} no longer in the code to delete")
        except Exception as error:  # any failure here only means "not compared"
            reason = getattr(error, "message", None) or str(error)
            files = counted(len(plan.code_files), "file")
            out(f"code: {files} for {code_obs} (OBS not compared: {reason})")
            for file in plan.code_files:
                out(f"  {file.rel} ({file.size} bytes)")
    if upload_inputs:
        for name, local, uri in plan.input_uploads():
            out(f"input {name}: {local} -> {uri}")
    out("body (POST /v2/{project_id}/training-jobs):")
    sys.stdout.write(json.dumps(plan.shown_body(), indent=2, ensure_ascii=False) + "\n")


def wait_and_report(
    source: Callable[[], TrainingService],
    job: Job,
    *,
    reconnect: Callable[[], None] | None = None,
    timeout: float | None = None,
    also_line: Callable[[str], None] | None = None,
    masker: Masker | None = None,
    profile: str | None = None,
) -> tuple[int, WaitResult | None]:
    """Follow ``job`` to its end with a live status line and its log (each line masked with
    ``masker``, and also given to ``also_line``); the exit code and how the wait ended (None:
    interrupted, or the service stayed away). ``profile`` is named in how to follow it later."""
    from majob.errors import ServiceUnreachable
    from majob.service.watch import wait_for

    console = _console()
    status = console.status(f"{job.name} ({job.id}): {_phase_text(job)}")

    def on_update(current: Job) -> None:
        status.update(
            f"{current.name} ({current.id}): {_phase_text(current)}, "
            f"{_seconds(current.duration_ms)}"
        )
        console.print(f"phase: {_phase_text(current)}", markup=False)

    def on_line(line: str) -> None:
        console.print(line, markup=False)
        if also_line is not None:
            also_line(line)

    def on_connection(text: str) -> None:
        console.print(f"majob: {text}", markup=False)

    status.start()
    try:
        result = wait_for(
            source,
            job.id,
            job_name=job.name,
            timeout=timeout,
            on_update=on_update,
            on_line=on_line,
            on_connection=on_connection,
            reconnect=reconnect,
            masker=masker,
        )
    except KeyboardInterrupt:
        status.stop()
        sys.stderr.write(
            f"interrupted: job {job.id} ({job.name}) keeps running on ModelArts\n"
            f"  follow it: majob logs {job.id} --follow\n"
            f"  stop it:   majob stop {job.id}\n"
        )
        return 130, None
    except ServiceUnreachable as error:
        status.stop()
        flag = f" --profile {profile}" if profile else ""
        sys.stderr.write(
            f"error: {error.message}\n"
            f"  it may still be running; when the service is back:\n"
            f"  status:    majob status {job.id}{flag}\n"
            f"  follow it: majob logs {job.id} --follow{flag}\n"
        )
        return 1, None
    finally:
        status.stop()
    return _report_end(result), result


def _report_end(result: WaitResult) -> int:
    job = result.job
    if result.timed_out:
        sys.stderr.write(f"job {job.id} is still {job.phase} after the wait's time limit\n")
        return 1
    if job.succeeded:
        typer.echo(f"job {job.id} ({job.name}) Completed in {_seconds(job.duration_ms)}")
        return 0
    lines = [f"error: job {job.id} ({job.name}) ended {_phase_text(job)}"]
    failed = job.failed_task()
    if failed is not None:
        message = f": {failed.message}" if failed.message else ""
        lines.append(f"error: task {failed.task} exited with code {failed.exit_code}{message}")
        tail = result.tail_of(failed.task)
        if tail:
            lines.append(f"last lines of {failed.task}:")
            lines += [f"  {line}" for line in tail]
    elif job.phase == "Abnormal":
        lines.append("error: the job was lost (a node or the service failed while it ran)")
    lines.append(f"hint: majob logs {job.id} shows the whole log")
    sys.stderr.write("\n".join(lines) + "\n")
    return 1


@commands.command()
@user_errors
def submit(
    spec: Annotated[Path, typer.Argument(help="The job spec (YAML).", show_default=False)],
    stage: Annotated[str, typer.Option("--stage", help="debug (a short job) or formal.")] = "debug",
    dry_run: Annotated[
        bool,
        typer.Option("--dry-run", help="Print what would be uploaded and the body; send nothing."),
    ] = False,
    wait: Annotated[
        bool, typer.Option("--wait", help="Follow the job to its end; exit 0 only if it completes.")
    ] = False,
    upload_inputs: Annotated[
        bool,
        typer.Option(
            "--upload-inputs", help="Upload each input's local stand-in to its OBS path first."
        ),
    ] = False,
    set_: SetOption = None,
    profile: ProfileOption = None,
    dump: Annotated[
        bool,
        typer.Option(
            "--dump",
            help="Dump with msprobe as the spec's `precision:` says, into the first output "
            "(uploaded with it); the code is staged with majob's bootstrap, yours is unchanged.",
        ),
    ] = False,
    force: Annotated[
        bool,
        typer.Option(
            "--force", help="Submit formal though debug has not passed for this code and spec."
        ),
    ] = False,
    reason: Annotated[
        str | None, typer.Option("--reason", help="Why --force (kept in the ledger).")
    ] = None,
    ledger_path: Annotated[
        Path | None,
        typer.Option("--ledger", help="The ledger file (default ./.majob/ledger.db)."),
    ] = None,
) -> None:
    """Check SPEC, upload its code, and create the ModelArts training job (exactly once).

    formal needs the debug stage passed for the same code and spec (or --force --reason); a
    submit that waits records its stage in the ledger, as `majob pipeline` does."""
    from majob.pipeline.by_hand import StageByHand, formal_gate_line, override_for
    from majob.pipeline.digests import Fingerprint
    from majob.pipeline.ledger import Ledger
    from majob.service.api import cloud_stage
    from majob.service.connect import ServiceSource, console_url, open_store
    from majob.service.submit import Submitter, plan_submit
    from majob.spec.load import load_spec

    if reason is not None and not force:
        raise UserInputError("--reason goes with --force")
    chosen = cloud_stage(stage)
    selected = _profile(profile)
    # The boot file and the stand-ins are checked by the pre-flight, with everything else.
    job_spec = load_spec(spec, overrides=set_ or (), profile=selected, check_files="code_dir")
    ledger = Ledger(ledger_path)
    # The gate and the record are about the user's code, so they come before any dump staging;
    # one fingerprint (the code's digests, from the upload's hash cache) serves both.
    fingerprint = Fingerprint.of(job_spec)
    gate_line = (
        formal_gate_line(ledger, job_spec, fingerprint) if dry_run and chosen == "formal" else ""
    )
    override = (
        ""
        if dry_run
        else override_for(
            ledger, job_spec, fingerprint, chosen, (reason or "") if force else None, str(spec)
        )
    )
    if override:
        typer.echo(f"[majob] formal: gate overridden; reason: {override}")
    by_hand = (
        StageByHand(ledger, job_spec, fingerprint, str(spec.resolve()), chosen, override)
        if wait and not dump  # a dump run is a precision run, not the stage itself
        else None
    )
    if dump:
        from majob.precision.record import PRECISION_DIR
        from majob.precision.staging import staged_for_dump

        staging = Path.cwd() / PRECISION_DIR / "staging" / job_spec.name
        job_spec = staged_for_dump(job_spec, staging)
    plan = plan_submit(job_spec, chosen)
    if dry_run:
        _print_dry_run(plan, selected, upload_inputs, gate_line)
        return
    source = ServiceSource(selected)
    try:
        store = open_store(selected)
        try:
            submitter = Submitter(source(), store, selected, report=typer.echo)
            job = submitter.submit(plan, upload_inputs=upload_inputs)
        finally:
            store.close()
        typer.echo(f"submitted job {job.id} ({job.name}): {_phase_text(job)}")
        url = console_url(selected)
        if url:
            typer.echo(f"console: {url}")
        if not wait:
            typer.echo(f"follow it: majob logs {job.id} --follow   status: majob status {job.id}")
            return
        if by_hand is not None:
            by_hand.job_created(job)
        code, waited = wait_and_report(
            source,
            job,
            reconnect=source.reconnect,
            also_line=by_hand.line if by_hand is not None else None,
            masker=job_spec.from_environ.masker(),
            profile=selected.name,
        )
        if by_hand is not None:
            code = _record_stage(by_hand, selected, code, waited)
    finally:
        source.close()
        ledger.close()
    if code:
        raise typer.Exit(code)


def _record_stage(
    by_hand: StageByHand, profile: Profile, code: int, waited: WaitResult | None
) -> int:
    """Judge the waited-for job as a pipeline would and record it; the exit code."""
    from majob.pipeline.by_hand import judge_completed_job

    stage = by_hand.stage
    if waited is None:  # Ctrl-C, or the service stayed away: the next pipeline follows the job
        by_hand.finish("interrupted")
        return code
    job = waited.job
    if code != 0:
        by_hand.finish("failed", f"job {job.id} ended {job.phase}")
        return code
    judged = judge_completed_job(
        by_hand.spec, stage, profile, job, by_hand.lines, by_hand.reader.series
    )
    if not judged.passed:
        by_hand.finish("failed", judged.reason, judged.outputs)
        sys.stderr.write(f"error: the {stage} stage failed: {judged.reason}\n")
        return 1
    by_hand.finish("passed", outputs=judged.outputs)
    follow = " (the formal gate is open for this code and spec)" if stage == "debug" else ""
    typer.echo(f"[majob] {stage} passed: ledger record #{by_hand.record_id}{follow}")
    return 0


def run_cloud_stage(spec: Path, stage: str, overrides: list[str], profile: str | None) -> None:
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


# -- job management --------------------------------------------------------------------------


def _with_service(profile: str | None) -> ServiceSource:
    from majob.service.connect import ServiceSource

    return ServiceSource(_profile(profile))


@commands.command()
@user_errors
def status(job_ref: JobArgument, profile: ProfileOption = None) -> None:
    """Show a job's phase, tasks, exit codes and recent events."""
    source = _with_service(profile)
    try:
        service = source()
        job = resolve_job(service, job_ref)
        events = service.events(job.id, limit=100)
    finally:
        source.close()
    out = typer.echo
    out(f"job {job.id} ({job.name})")
    out(f"  phase:    {_phase_text(job)}")
    out(f"  flavor:   {job.flavor or '-'} x {job.node_count}")
    out(f"  created:  {_when(job.create_time)}   started: {_when(job.start_time)}")
    out(f"  duration: {_seconds(job.duration_ms)}")
    exits = {t.task: t for t in job.task_statuses}
    for task in job.task_names():
        state = exits.get(task)
        code = "" if state is None or state.exit_code is None else f" exit {state.exit_code}"
        message = f" ({state.message})" if state is not None and state.message else ""
        out(f"  task {task}:{code}{message}")
    for event in events[-5:]:
        out(f"  event {event.time} {event.level}: {event.message}")


@commands.command()
@user_errors
def logs(
    job_ref: JobArgument,
    task: Annotated[
        str | None, typer.Option("--task", help="One task, e.g. worker-1 (default: all, prefixed).")
    ] = None,
    follow: Annotated[
        bool, typer.Option("--follow", "-f", help="Keep printing until the job ends.")
    ] = False,
    profile: ProfileOption = None,
) -> None:
    """Print a job's log: all tasks merged, each line prefixed with its task, or one task's.

    With --follow, the job's final phase comes last (on stderr: the log stays alone on
    stdout), and the exit code is 0 only when the job completed."""
    from majob.service.logs import iter_logs

    source = _with_service(profile)
    try:
        service = source()
        job = resolve_job(service, job_ref)
        try:
            for line in iter_logs(service, job.id, task=task, follow=follow):
                sys.stdout.write(line + "\n")
                sys.stdout.flush()
        except KeyboardInterrupt:
            raise typer.Exit(130) from None
        if follow:
            job = service.get(job.id)  # iter_logs returns once the job has ended
    finally:
        source.close()
    if follow:
        code = _report_phase(job)
        if code:
            raise typer.Exit(code)


def _report_phase(job: Job) -> int:
    """One line with how ``job`` ended (and which task failed); its exit code."""
    if job.succeeded:
        sys.stderr.write(f"job {job.id} ({job.name}) Completed in {_seconds(job.duration_ms)}\n")
        return 0
    failed = job.failed_task()
    why = f": task {failed.task} exited with code {failed.exit_code}" if failed else ""
    sys.stderr.write(f"error: job {job.id} ({job.name}) ended {_phase_text(job)}{why}\n")
    return 1


@commands.command("list")
@user_errors
def list_(
    phase: Annotated[
        list[str] | None, typer.Option("--phase", help="Only jobs in this phase. Repeatable.")
    ] = None,
    name: Annotated[str | None, typer.Option("--name", help="Only names containing this.")] = None,
    limit: Annotated[int, typer.Option("--limit", min=1, max=500, help="At most this many.")] = 20,
    profile: ProfileOption = None,
) -> None:
    """List the newest jobs in a table."""
    from rich.table import Table

    from majob.service.api import search_jobs
    from majob.service.base import PHASES

    for wanted in phase or []:
        if wanted not in PHASES:
            raise UserInputError(f"--phase {wanted!r}: choose one of {', '.join(PHASES)}")
    source = _with_service(profile)
    try:
        found = search_jobs(source(), name=name, phase=phase, limit=limit)
    finally:
        source.close()
    table = Table("ID", "NAME", "PHASE", "CREATED", "DURATION", "FLAVOR")
    for job in found:
        table.add_row(
            job.id,
            job.name,
            _phase_text(job),
            _when(job.create_time),
            _seconds(job.duration_ms),
            f"{job.flavor} x{job.node_count}" if job.flavor else "-",
        )
    if not found:
        typer.echo("no jobs")
        return
    _print_table(table)


@commands.command()
@user_errors
def stop(job_ref: JobArgument, profile: ProfileOption = None) -> None:
    """Terminate a job (Creating, Pending or Running)."""
    source = _with_service(profile)
    try:
        service = source()
        job = resolve_job(service, job_ref)
        if job.finished:
            typer.echo(f"job {job.id} ({job.name}) has already ended: {job.phase}")
            return
        stopped = service.terminate(job.id)
    finally:
        source.close()
    typer.echo(f"stopping job {stopped.id} ({stopped.name}): {_phase_text(stopped)}")


@commands.command()
@user_errors
def delete(job_ref: JobArgument, profile: ProfileOption = None) -> None:
    """Delete a job and its record (stop it first if it runs)."""
    source = _with_service(profile)
    try:
        service = source()
        job = resolve_job(service, job_ref)
        service.delete(job.id)
    finally:
        source.close()
    typer.echo(f"deleted job {job.id} ({job.name})")


@commands.command()
@user_errors
def flavors(
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Ask the service, not the cache.")
    ] = False,
    profile: ProfileOption = None,
) -> None:
    """List the resource flavors the service offers."""
    from rich.table import Table

    offered = _offerings(profile, refresh)
    table = Table("FLAVOR", "TYPE", "MAX NODES", "CPU", "ACCELERATOR", "MEMORY")
    for flavor in sorted(offered.flavors, key=lambda f: f.id):
        table.add_row(
            flavor.id,
            flavor.type,
            str(flavor.max_num),
            flavor.cpu,
            flavor.gpu or flavor.npu or "-",
            flavor.memory,
        )
    _print_table(table)


@commands.command()
@user_errors
def engines(
    refresh: Annotated[
        bool, typer.Option("--refresh", help="Ask the service, not the cache.")
    ] = False,
    profile: ProfileOption = None,
) -> None:
    """List the preset engines (image.engine and image.version) the service offers."""
    from rich.table import Table

    offered = _offerings(profile, refresh)
    table = Table("ENGINE", "VERSION")
    for engine in sorted(offered.engines, key=lambda e: (e.name, e.version)):
        table.add_row(engine.name, engine.version)
    _print_table(table)


def _offerings(profile: str | None, refresh: bool) -> Offerings:
    from majob.service.offerings import cache_file, load_offerings

    source = _with_service(profile)
    try:
        service = source()
        cache = cache_file(service.config.endpoint, service.config.project_id)
        return load_offerings(service, cache, refresh=refresh)
    finally:
        source.close()


def validate_online(spec: Path, stage: str, overrides: list[str], profile: str | None) -> list[str]:
    """``majob validate --online``: submit's pre-flight problems for SPEC, nothing sent."""
    from majob.service.api import cloud_stage
    from majob.service.connect import open_store
    from majob.service.submit import Submitter, plan_submit
    from majob.spec.load import load_spec

    chosen = cloud_stage(stage)
    selected = _profile(profile)
    job_spec = load_spec(spec, overrides=overrides, profile=selected, check_files="code_dir")
    plan = plan_submit(job_spec, chosen)
    source = _with_service(profile)
    try:
        store = open_store(selected)
        try:
            return Submitter(source(), store, selected).preflight(plan, upload_inputs=False)
        finally:
            store.close()
    finally:
        source.close()

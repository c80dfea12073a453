"""``majob status``, ``logs``, ``list``, ``stop``, ``delete``, ``flavors``, ``engines``.

JOB is a job id, a unique prefix of one, or a job name (the newest of that name). The service
client, the OBS store and rich are imported inside the command bodies: ``majob --help`` must
not load huaweicloudsdk* or esdk-obs.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import ProfileOption, user_errors
from majob.cli.jobtext import phase_text, print_table, task_text, took, usage_text, when
from majob.errors import UserInputError
from majob.text import counted

if TYPE_CHECKING:
    from majob.service.base import Job, TrainingService
    from majob.service.connect import ServiceSource
    from majob.service.offerings import Offerings

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""

JobArgument = Annotated[
    str,
    typer.Argument(
        metavar="JOB",
        help="Job id, a unique start of one (as `majob history` prints it), or a job name "
        "(the newest job of that name).",
    ),
]


def resolve_job(service: TrainingService, ref: str) -> Job:
    """The job ``ref`` names (``majob.service.lookup``); when it was a name several jobs
    share, says on stderr which was taken and lists the others."""
    from majob.service.lookup import find_job

    match = find_job(service, ref)
    note = match.note()
    if note:
        typer.echo(f"note: {note}", err=True)
    return match.job


# -- job management --------------------------------------------------------------------------


def _with_service(profile: str | None) -> ServiceSource:
    from majob.service.connect import ServiceSource
    from majob.spec.profiles import load_profile

    return ServiceSource(load_profile(profile))


@commands.command()
@user_errors
def status(
    job_ref: JobArgument,
    metrics: Annotated[
        bool,
        typer.Option(
            "--metrics", help="Also show each task's CPU and memory use per minute (% of flavor)."
        ),
    ] = False,
    profile: ProfileOption = None,
) -> None:
    """Show a job's phase, tasks, exit codes, restarts and recent events.

    The fault-tolerance history says when each restart happened and why."""
    source = _with_service(profile)
    try:
        service = source()
        job = resolve_job(service, job_ref)
        events = service.events(job.id, limit=5, newest=True)
        usage = job.usage() if metrics else {}
    finally:
        source.close()
    out = typer.echo
    out(f"job {job.id} ({job.name})")
    out(f"  phase:    {phase_text(job)}")
    out(f"  flavor:   {job.flavor or '-'} x {job.node_count}")
    out(f"  created:  {when(job.create_time)}   started: {when(job.start_time)}")
    out(f"  duration: {took(job.duration_ms)}")
    exits = {t.task: t for t in job.task_statuses}
    for task in job.task_names():
        out(f"  {task_text(task, exits.get(task), job)}")
    for task, measured in usage.items():
        out(f"  metrics {task}: {usage_text(measured)}")
    if job.run_ends:
        out(f"  fault tolerance: {counted(len(job.restarts), 'restart')}")
    for end in job.run_ends:
        out(f"    {when(end.at * 1000 if end.at else None)} {end.text()}")
    for event in events:
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
        sys.stderr.write(f"job {job.id} ({job.name}) Completed in {took(job.duration_ms)}\n")
        return 0
    failed = job.failed_task()
    why = f": task {failed.task} exited with code {failed.exit_code}" if failed else ""
    sys.stderr.write(f"error: job {job.id} ({job.name}) ended {phase_text(job)}{why}\n")
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

    from majob.api import search_jobs
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
            phase_text(job),
            when(job.create_time),
            took(job.duration_ms),
            f"{job.flavor} x{job.node_count}" if job.flavor else "-",
        )
    if not found:
        typer.echo("no jobs")
        return
    print_table(table)


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
    typer.echo(f"stopping job {stopped.id} ({stopped.name}): {phase_text(stopped)}")


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
    print_table(table)


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
    print_table(table)


def _offerings(profile: str | None, refresh: bool) -> Offerings:
    from majob.service.offerings import cache_file, load_offerings

    source = _with_service(profile)
    try:
        service = source()
        # The REST backend says where it is (its ServiceConfig); the cache is keyed by that.
        config = getattr(service, "config", None)
        cache = cache_file(config.endpoint, config.project_id) if config is not None else None
        return load_offerings(service, cache, refresh=refresh)
    finally:
        source.close()

"""``majob data stage obs://SRC sfs://SERVER/PATH --pool POOL``: copy a data set from OBS onto an
SFS Turbo share with a transfer job on the pool (``majob.data.stage_job``), follow its progress,
and record the verified copy in the ledger (``majob.pipeline.data_stages``) so that the next
stage of an unchanged source is skipped and ``majob checklist`` can say the data is staged."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import ProfileOption

if TYPE_CHECKING:
    from majob.data.stage_job import SfsTarget, StageProgress
    from majob.pipeline.ledger import Ledger
    from majob.service.base import Job
    from majob.spec.profiles import Profile
    from majob.storage.uri import ObsUri

# The preset engine of the transfer job (from majob's catalogue): Python 3.10, x86.
STAGE_ENGINE = "pytorch-2.1.0"


def stage(
    source: Annotated[str, typer.Argument(help="The OBS folder, obs://bucket/folder/.")],
    target: Annotated[str, typer.Argument(help="The SFS Turbo folder, sfs://SERVER/PATH.")],
    pool: Annotated[
        str, typer.Option("--pool", help="The dedicated pool whose VPC reaches the share.")
    ],
    flavor: Annotated[
        str | None, typer.Option("--flavor", help="A flavor of the pool (a CPU pool takes none).")
    ] = None,
    jobs: Annotated[int, typer.Option("--jobs", min=1, max=64, help="Parallel downloads.")] = 8,
    force: Annotated[
        bool, typer.Option("--force", help="Run the job even when the source is unchanged.")
    ] = False,
    ledger: Annotated[
        Path | None, typer.Option("--ledger", help="The ledger (default .majob/ledger.db).")
    ] = None,
    profile: ProfileOption = None,
) -> None:
    """Copy an OBS folder onto an SFS Turbo share with a transfer job, verified and resumable.

    The job mounts SERVER:/ on the pool and copies into PATH with majob's copy engine
    (incremental, checksums verified, a manifest beside the data). A job then reads it with
    volumes: [{nfs: SERVER:/PATH, mount: /mnt/data}]. An unchanged source is not copied again."""
    from majob.data.stage_job import SfsTarget
    from majob.pipeline.data_stages import last_data_stage
    from majob.pipeline.ledger import Ledger
    from majob.spec.profiles import load_profile
    from majob.storage.uri import ObsUri

    src = ObsUri.parse(source).as_dir()
    where = SfsTarget.parse(target)
    selected = load_profile(profile)
    digest, files, size = _listing(selected, src)
    with Ledger(ledger) as opened:
        last = last_data_stage(opened, src.uri, where.uri)
        if last is not None and last.listing_digest == digest and not force:
            typer.echo(
                f"{where.uri}: unchanged since job {last.job_id} ({last.staged_at}): "
                f"{_counted(last.files, last.bytes)} already staged from {src.uri}"
            )
            _mount_hint(where)
            return
        typer.echo(f"staging {_counted(files, size)} from {src.uri} to {where.uri} on {pool}")
        _run_job(opened, selected, src, where, pool=pool, flavor=flavor, jobs=jobs)


def _listing(profile: Profile, src: ObsUri) -> tuple[str, int, int]:
    """One listing of the source: its digest, file count and bytes."""
    from majob.data.manifest import listing_digest
    from majob.errors import UserInputError
    from majob.service.connect import open_store
    from majob.storage.listing import list_folder

    with open_store(profile) as store:
        objects = [o for o in list_folder(store, src) if not o.key.endswith("/")]
    if not objects:
        raise UserInputError(
            f"{src.uri} holds no objects: nothing to stage",
            hint=f"upload the data first, e.g. majob obs sync LOCAL_DIR {src.uri}",
        )
    return listing_digest(objects), len(objects), sum(o.size for o in objects)


def _run_job(
    ledger: Ledger,
    profile: Profile,
    src: ObsUri,
    where: SfsTarget,
    *,
    pool: str,
    flavor: str | None,
    jobs: int,
) -> None:
    from majob.data.stage_job import StageProgress, ship_code, stage_spec_data
    from majob.errors import DataStageError
    from majob.pipeline.data_stages import save_data_stage
    from majob.service.connect import obs_config
    from majob.spec.catalog import ENGINES

    engine = next(e for e in ENGINES if e.id == STAGE_ENGINE)
    endpoint = obs_config(profile).resolved_endpoint()
    progress = StageProgress()
    with tempfile.TemporaryDirectory(prefix="majob-stage-code-") as folder:
        data = stage_spec_data(
            src,
            where,
            code_dir=ship_code(Path(folder)),
            pool=pool,
            flavor=flavor,
            endpoint=endpoint,
            jobs=jobs,
            engine=(engine.name, engine.version),
        )
        job = _submit(data, profile)
    typer.echo(f"transfer job {job.id} ({job.name}) submitted; majob logs {job.id} shows its log")
    _follow(job, progress)
    if not job.succeeded or not progress.digest:
        said = "; ".join(progress.errors) or "its log names no error"
        raise DataStageError(
            f"the transfer job {job.id} ended {job.phase_label}: {said}",
            hint=f"nothing is recorded as staged; majob logs {job.id}; run the same command "
            "again: the copy resumes where it stopped",
        )
    save_data_stage(
        ledger,
        source=src.uri,
        target=where.uri,
        nfs=where.nfs,
        listing_digest=progress.digest,
        files=progress.files,
        size=progress.bytes,
        job_id=job.id,
    )
    copied = progress.summary.rsplit("; ", 1)[-1] if "; copied" in progress.summary else ""
    typer.echo(
        f"staged and verified: {_counted(progress.files, progress.bytes)} in {where.uri}"
        + (f" ({copied})" if copied else "")
    )
    _mount_hint(where)


def _submit(data: dict[str, object], profile: Profile) -> Job:
    from pydantic import ValidationError

    from majob.errors import UserInputError
    from majob.service.submit import plan_submit, submit_plan
    from majob.spec.models import JobSpec

    try:
        spec = JobSpec.model_validate(data)
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        raise UserInputError(f"the transfer job cannot be built: {where}: {first['msg']}") from None
    return submit_plan(plan_submit(spec, "formal"), profile, report=typer.echo)


def _follow(job: Job, progress: StageProgress) -> None:
    from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

    with Progress(
        TextColumn("{task.description}"), BarColumn(), DownloadColumn(), transient=True
    ) as bar:
        task = bar.add_task("copying", total=None)

        def on_line(line: str) -> None:
            if progress.read(line):
                bar.update(
                    task,
                    completed=progress.bytes,
                    total=progress.total_bytes or None,
                    description=f"copying {progress.files}/{progress.total_files} files",
                )

        job.wait(on_line=on_line)


def _counted(files: int, size: int) -> str:
    from majob.text import counted, human_bytes

    return f"{counted(files, 'file')} ({human_bytes(size)})"


def _mount_hint(where: SfsTarget) -> None:
    typer.echo(
        f"read it in a job: volumes: [{{nfs: '{where.nfs}', mount: /mnt/data}}] "
        "(on a dedicated pool; docs/data.md)"
    )

"""The Python API's compositions: ``majob.submit``, ``majob.jobs`` and ``majob.perf_report``.

Each composes the layers below as the CLI does: a profile and a spec are loaded, the service
submits (``majob.service.submit``), and the ``Job`` comes back bound to its client:
``job.refresh()``, ``job.wait()``, ``job.logs(follow=True)``, ``job.stop()``. Close the client
when done with ``job.service.close()`` (or let the process end). The façade (``majob/__init__``)
lists these with the rest of the public API.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from majob.service.base import Job, JobFilter, JobList, TrainingService

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis
    from majob.spec.models import JobSpec
    from majob.spec.profiles import Profile


def _profile(profile: str | Profile | None) -> Profile:
    from majob.spec.profiles import Profile, load_profile

    return profile if isinstance(profile, Profile) else load_profile(profile)


def submit(
    spec: JobSpec | str | os.PathLike[str],
    stage: str = "debug",
    *,
    profile: str | Profile | None = None,
    overrides: Sequence[str] = (),
    upload_inputs: bool = False,
    report: Callable[[str], None] | None = None,
    resume_from: str | None = None,
) -> Job:
    """Check, upload and submit ``spec`` (a ``JobSpec`` or a spec file) as ``stage``;
    ``resume_from`` (``debug``, ``formal`` or an ``obs://`` folder): the checkpoints the job
    starts from, copied into the stage's own checkpoint folder first (``--resume-from``)."""
    from majob.service.submit import cloud_stage, plan_submit, submit_plan
    from majob.spec.models import JobSpec

    chosen = cloud_stage(stage)
    selected = _profile(profile)
    if not isinstance(spec, JobSpec):
        from majob.spec.load import load_spec
        from majob.spec.set_checks import warn_overrides

        spec = load_spec(Path(spec), overrides=overrides, profile=selected, check_files="code_dir")
        warn_overrides(spec, overrides, [chosen])
    return submit_plan(
        plan_submit(spec, chosen, resume_from=resume_from),
        selected,
        upload_inputs=upload_inputs,
        report=report or (lambda line: None),
    )


def jobs(
    *,
    name: str | None = None,
    phase: str | Sequence[str] | None = None,
    limit: int = 20,
    profile: str | Profile | None = None,
) -> JobList:
    """The newest jobs (at most ``limit``), optionally by name substring and phase: a list,
    shown as a table in a notebook. The jobs share one open client: ``jobs[0].service.close()``
    when done (or let the process end)."""
    from majob.service.connect import open_service

    found = search_jobs(open_service(_profile(profile)), name=name, phase=phase, limit=limit)
    return JobList(found)


def search_jobs(
    service: TrainingService,
    *,
    name: str | None = None,
    phase: str | Sequence[str] | None = None,
    limit: int = 20,
) -> list[Job]:
    """Page through ``service``'s search (50 a page, the service's limit) up to ``limit``."""
    phases = [phase] if isinstance(phase, str) else list(phase) if phase else None
    found: list[Job] = []
    offset = 0
    while len(found) < limit:
        page, total = service.search(
            JobFilter(name=name, phases=phases), offset=offset, limit=min(50, limit - len(found))
        )
        found.extend(page)
        offset += len(page)
        if not page or offset >= total:
            break
    return found[:limit]


def perf_report(
    target: str | os.PathLike[str],
    *,
    msprof: bool = False,
    runs_dir: str | os.PathLike[str] | None = None,
    profile: str | None = None,
) -> Diagnosis:
    """``majob perf TARGET`` from Python: where a step's time goes and what to change.

    ``target`` is a profile directory, a local run id (or ``latest``), an ``obs://`` path or a
    job id/name. A notebook shows the report (findings, step time over the steps, each step's
    breakdown, the ranks side by side); ``.summary()`` is its text, ``.findings`` the ranked
    findings. ``msprof`` runs msprof-analyze's advisor too (tens of seconds; needs the
    ``perf`` extra). A profile of a run or job majob recorded becomes a perf record, as with
    the CLI (the checklist's "performance diagnosed")."""
    import tempfile
    import warnings

    from majob.perf.report import diagnose
    from majob.pipeline.perf_target import record_diagnosis, resolve_target
    from majob.runner.runs import default_runs_dir

    runs = Path(runs_dir) if runs_dir is not None else default_runs_dir()
    found = resolve_target(os.fspath(target), runs, profile)
    with tempfile.TemporaryDirectory(prefix="majob-perf-") as scratch:
        diagnosis = diagnose(
            found.target.label, found.target.path, Path(scratch), run_advisor=msprof
        )
    note = record_diagnosis(found, diagnosis, "majob.perf_report")
    if note:
        warnings.warn(note, stacklevel=2)
    return diagnosis

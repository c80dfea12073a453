"""What ``majob perf TARGET`` (and ``majob.perf_report``) reads, and whose code it was.

``majob.perf.targets`` resolves a directory, a local run id or an ``obs://`` path; a job id or
name needs the service and the ledger, which sit on this floor: the job's output on OBS, as the
ledger recorded the spec it ran (``<output>/<stage>/profiling/``, else ``<output>/profiling/``).

A profile of a run or job majob recorded has a basis (``PerfBasis``: the spec, stage and
digests): a job's from its ledger record, a local run's from the ``perf/basis.json`` that
``majob run --perf`` left in the run directory. Its diagnosis then becomes a perf record.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import MajobError, UserInputError
from majob.perf.targets import PERF_DIR, Target, download, resolve
from majob.pipeline.perf_records import PerfBasis

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis

BASIS_FILE = Path("perf") / "basis.json"
_BASIS_DEPTH = 6  # <run>/outputs/<channel>/profiling/<rank folder>/ASCEND_PROFILER_OUTPUT


@dataclass(frozen=True)
class PerfTarget:
    target: Target
    basis: PerfBasis | None  # None: majob does not know whose code the profile is of


def resolve_target(text: str, runs_dir: Path, profile: str | None) -> PerfTarget:
    """``text`` as a local profile (a directory, a run id or an obs:// path), else as a job of
    the service whose output the ledger names; ``UserInputError`` saying both when neither."""
    cache = Path.cwd() / PERF_DIR / "downloads"
    try:
        found = resolve(text, runs_dir, cache, profile)
        return PerfTarget(found, None if text.startswith("obs://") else basis_of(found.path))
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


def _job_target(ref: str, cache: Path, profile: str | None) -> PerfTarget:
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
    basis = PerfBasis(record.spec_name, record.stage, record.spec_digest, record.code_digest)
    base = obs if obs.endswith("/") else obs + "/"
    for candidate in (f"{base}{record.stage}/profiling/", f"{base}profiling/"):
        try:
            found = Target(f"{ref} ({record.stage})", download(candidate, cache, profile))
        except UserInputError:
            continue
        return PerfTarget(found, basis)
    raise UserInputError(
        f"job {job.name} ({job.id}): no profiling data in its output {obs}",
        hint="profile it: `majob submit SPEC --perf` (or `majob pipeline SPEC --perf`)",
    )


def write_basis(run_dir: Path, basis: PerfBasis) -> None:
    """Say in a profiled run's directory whose code it ran (``majob perf RUN`` reads it)."""
    path = run_dir / BASIS_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(basis), indent=2) + "\n", encoding="utf-8")


def basis_of(path: Path) -> PerfBasis | None:
    """The basis of the run directory ``path`` is in (or is), if ``majob run --perf`` left one."""
    for folder in [path, *path.resolve().parents][:_BASIS_DEPTH]:
        try:
            data = json.loads((folder / BASIS_FILE).read_text(encoding="utf-8"))
            return PerfBasis(
                str(data["spec_name"]),
                str(data["stage"]),
                str(data["spec_digest"]),
                str(data["code_digest"]),
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return None


def record_diagnosis(target: PerfTarget, diagnosis: Diagnosis, by: str) -> str:
    """A profile of a run or job majob knows the code of becomes a perf record (the
    checklist's "performance diagnosed"); a note when the ledger could not take it, else ""."""
    from majob.pipeline.ledger import Ledger
    from majob.pipeline.perf_records import save_perf_record

    if target.basis is None:
        return ""
    try:
        with Ledger() as ledger:
            save_perf_record(ledger, target.basis, diagnosis, source=by, target=target.target.label)
    except MajobError as error:
        return f"the diagnosis was not recorded in the ledger: {error.message}"
    return ""

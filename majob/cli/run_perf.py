"""``majob run --perf``'s end: the profile diagnosed once (majob's own analysis), recorded in
the ledger as a perf record of the spec's code (the checklist's "performance diagnosed"), and the
run directory told whose code it ran (``majob perf RUN`` records its diagnosis too)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis
    from majob.runner.result import RunResult
    from majob.spec.models import JobSpec


def diagnose_and_record(spec: JobSpec, spec_file: Path, result: RunResult) -> Diagnosis | str:
    """The run's diagnosis, or why there is none; a ledger that cannot take the record is
    said on stderr (the run and its diagnosis stand)."""
    from majob.errors import MajobError
    from majob.perf.setup import profiling_dir, quick_diagnosis
    from majob.pipeline.digests import Fingerprint
    from majob.pipeline.ledger import Ledger
    from majob.pipeline.perf_records import PerfBasis, save_perf_record
    from majob.pipeline.perf_target import write_basis

    profile = profiling_dir(result.output_dirs)
    if profile is None:
        return "no profile was written"
    diagnosis = quick_diagnosis(profile)
    if isinstance(diagnosis, str):
        return diagnosis
    fingerprint = Fingerprint.of(spec)
    basis = PerfBasis(spec.name, result.stage, fingerprint.spec_digest, fingerprint.code_digest)
    write_basis(result.run_dir, basis)
    try:
        with Ledger(spec_file=spec_file) as ledger:
            save_perf_record(
                ledger, basis, diagnosis, source="majob run --perf", target=result.run_id
            )
    except MajobError as error:
        sys.stderr.write(f"note: the diagnosis was not recorded in the ledger: {error.message}\n")
    return diagnosis


def step_lines(result: RunResult, profiled: tuple[JobSpec, Path] | None) -> list[str]:
    """The run's step times; for a profiled run (``profiled``: its spec and spec file), where
    the profile is and its diagnosis, which is recorded."""
    from majob.perf.setup import local_run_lines

    diagnosis = diagnose_and_record(*profiled, result) if profiled is not None else None
    return local_run_lines(result.run_dir, result.output_dirs, profiled is not None, diagnosis)

"""A profiled stage (``--perf``, or a stage ``expect.perf`` names): its profile diagnosed with
majob's own analysis (msprof-analyze's advisor is left to ``majob perf``: it takes tens of
seconds), the ``expect.perf`` bounds checked against it, and a perf record written.

A local stage's profile is in its run's first output; a cloud stage's is read back from OBS
(``<output>/<stage>/profiling/``, which the job's output upload put there). A stage that was to
be profiled and has no profile fails ``expect.perf`` and says why.
"""

from __future__ import annotations

import math
import tempfile
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import MajobError
from majob.perf.setup import PROFILING_DIR, diagnosis_lines
from majob.pipeline.expect import COMPARE
from majob.pipeline.judge import Outcome
from majob.spec.models import JobSpec
from majob.spec.perf_expect import SHARE_PARTS, PerfExpect, parse_share_bound, parse_time_bound

__all__ = ["diagnosis_lines", "diagnose_stage", "judge_perf", "perf_failures", "profiled_outcome"]

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis
    from majob.pipeline.record import StageRecorder
    from majob.spec.profiles import Profile


def stage_profiled(spec: JobSpec, stage: str, asked: bool) -> bool:
    """``--perf`` was given, or the spec's ``expect.perf`` names ``stage``."""
    perf = spec.expect.perf
    return asked or (perf is not None and perf.applies_to(stage))


def diagnose_stage(stage: str, outcome: Outcome, profile: Profile) -> Diagnosis | str:
    """The diagnosis of the profile ``outcome``'s run or job wrote, or why there is none."""
    from majob.perf.setup import profiling_dir, quick_diagnosis
    from majob.pipeline.cloudsteps import fetch_profiling

    missing = f"the {stage} run wrote no {PROFILING_DIR}/ folder"
    if stage == "local":
        root = profiling_dir(outcome.run.output_dirs) if outcome.run is not None else None
        return quick_diagnosis(root) if root is not None else missing
    if not any(f.path.startswith(f"{PROFILING_DIR}/") for f in outcome.stored):
        return missing
    label = f"{stage} ({outcome.job.id})" if outcome.job else stage
    with tempfile.TemporaryDirectory(prefix="majob-profile-") as scratch:
        try:
            return quick_diagnosis(fetch_profiling(outcome.stored, profile, Path(scratch)), label)
        except MajobError as error:  # OBS went away while it was read back
            return error.message.splitlines()[0]


def perf_failures(expect: PerfExpect, diagnosis: Diagnosis | str) -> list[str]:
    """The ``expect.perf`` bounds that fail on some rank, one line each (empty: all hold);
    ``diagnosis`` is the stage's, or why it has none."""
    if isinstance(diagnosis, str):
        return [f"expect.perf: the stage has no profile to check ({diagnosis})"]
    failures = []
    for name in ("step_p50", "step_p95"):
        bound = getattr(expect, name)
        if bound is None:
            continue
        op, limit = parse_time_bound(bound)
        for rank in diagnosis.ranks:
            value = rank.p50 if name == "step_p50" else rank.p95
            if not math.isnan(value) and not COMPARE[op](value, limit):  # NaN: none timed
                failures.append(
                    f"expect.perf.{name}: {name} {op} {limit:g} ms failed: {value:.3g} ms on "
                    f"{rank.label}"
                )
    for key, part in SHARE_PARTS.items():
        bound = getattr(expect, key)
        if bound is None:
            continue
        op, limit = parse_share_bound(bound)
        for rank in diagnosis.ranks:
            share = rank.share(part)
            if not COMPARE[op](share, limit):
                failures.append(
                    f"expect.perf.{key}: {key} {op} {limit:.0%} failed: {share:.0%} of a step "
                    f"on {rank.label} ({rank.per_step.get(part, 0.0):.3g} ms of "
                    f"{rank.step_mean:.3g} ms)"
                )
    if expect.findings is not None and diagnosis.findings:
        op, limit = parse_share_bound(expect.findings)
        top = diagnosis.findings[0]
        if not COMPARE[op](top.share, limit):
            advice = f"; {top.advice[0]}" if top.advice else ""
            failures.append(
                f"expect.perf.findings: findings {op} {limit:.0%} failed: {top.title} would "
                f"save {top.share:.0%} of a step{advice}"
            )
    return failures


def judge_perf(spec: JobSpec, stage: str, outcome: Outcome, found: Diagnosis | str) -> Outcome:
    """``outcome`` with ``expect.perf`` applied when it names ``stage`` (a stage that failed
    already keeps its reason)."""
    expect = spec.expect.perf
    if not outcome.passed or expect is None or not expect.applies_to(stage):
        return outcome
    failures = perf_failures(expect, found)
    return replace(outcome, passed=not failures, reason="; ".join(failures))


def profiled_outcome(
    spec: JobSpec, stage: str, outcome: Outcome, profile: Profile, recorder: StageRecorder, by: str
) -> tuple[Outcome, Diagnosis | str]:
    """A profiled stage's ``outcome`` with ``expect.perf`` applied and its diagnosis, which
    goes into the ledger as a perf record of the recorder's code (``by``: the command)."""
    from majob.pipeline.perf_records import PerfBasis, save_perf_record

    found = diagnose_stage(stage, outcome, profile)
    outcome = judge_perf(spec, stage, outcome, found)
    if not isinstance(found, str):
        fingerprint = recorder.fingerprint
        basis = PerfBasis(spec.name, stage, fingerprint.spec_digest, fingerprint.code_digest)
        target = outcome.job.id if outcome.job else (outcome.run.run_id if outcome.run else "")
        save_perf_record(recorder.ledger, basis, found, source=by, target=target)
    return outcome, found

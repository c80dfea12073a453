"""``majob.Pipeline``: local → debug → formal, gated, recorded, resumable.

::

    spec ─fingerprint─▶ plan (skip what passed for this code + spec) ─▶ for each stage to run:
        ledger.start ─▶ run (local: runner; debug/formal: submit + wait) ─▶ expect ─▶ ledger.finish

The pipeline stops at the first stage that does not pass, with its reason. Run again with
nothing changed, it skips every stage that passed and says so; killed during a cloud stage (even
with ``kill -9``), the next run adopts the job the killed one left (``adopt.py``): follows it,
or judges it if it ended, instead of submitting a second.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import MajobError, StageRefused, UserInputError
from majob.pipeline.adopt import adopt
from majob.pipeline.digests import Fingerprint
from majob.pipeline.gate import StagePlan, gate, plan_stages
from majob.pipeline.judge import Outcome
from majob.pipeline.ledger import Ledger
from majob.pipeline.ledger_schema import StageRecord, StageRecords
from majob.pipeline.likegate import judge_checks, keep_verdict
from majob.pipeline.metrics import summary
from majob.pipeline.perfstage import profiled_outcome, stage_profiled
from majob.pipeline.record import StageRecorder
from majob.pipeline.results import PipelineResult, StageResult
from majob.pipeline.stages import Live, Report, emulator_notes, run_cloud_stage, run_local_stage
from majob.spec.load import display_path
from majob.spec.models import STAGES, JobSpec, Stage

if TYPE_CHECKING:
    from majob.perf.report import Diagnosis
    from majob.service.base import Job, TrainingService
    from majob.spec.profiles import Profile


def parse_stage(value: str, option: str = "--until") -> Stage:
    if value not in STAGES:
        raise UserInputError(f"{option} {value!r}: choose local, debug or formal")
    return value


class Pipeline:
    """The pipeline of one spec (a ``JobSpec`` or a spec file).

    ``profile`` names where debug and formal run (``"emulator"`` for the emulated cloud);
    ``ledger`` defaults to ``.majob/ledger.db`` at the spec's project root (``project.py``);
    ``report`` sees every line of progress and log (default: printed, which in Jupyter
    streams into the cell as the stage runs); ``live`` shows a followed cloud job's status
    line (the CLI's, drawn under the log); ``warn``: each of ``overrides`` that would not do
    what it says is a ``SetWarning`` (the CLI, which says them itself, turns that off);
    ``resume_from`` (``--resume-from``: ``debug``, ``formal`` or an ``obs://`` folder) gives
    each cloud stage it runs those checkpoints (``service/checkpoints.py``)."""

    def __init__(
        self,
        spec: JobSpec | str | os.PathLike[str],
        *,
        profile: str | Profile | None = None,
        overrides: Sequence[str] = (),
        ledger: Ledger | str | os.PathLike[str] | None = None,
        upload_inputs: bool = False,
        report: Report | None = None,
        live: Live | None = None,
        warn: bool = True,
        resume_from: str | None = None,
        perf: bool = False,
    ) -> None:
        self._profile_ref = profile
        self.perf = perf  # every stage profiled as the spec's `perf:` says (`--perf`)
        self._profile: Profile | None = None
        if isinstance(spec, JobSpec):
            self.spec, self.spec_path = spec, ""
        else:
            from majob.spec.load import load_spec
            from majob.spec.models import STAGES
            from majob.spec.set_checks import warn_overrides

            self.spec = load_spec(Path(spec), overrides=overrides, profile=self.profile)
            if warn:
                warn_overrides(self.spec, overrides, STAGES)
            self.spec_path = str(Path(spec).resolve())
        # Without one named, the ledger of the spec's project (its code's, for a JobSpec).
        anchor = Path(self.spec_path or self.spec.code.dir)
        self.ledger = (
            ledger
            if isinstance(ledger, Ledger)
            else Ledger(Path(ledger) if ledger else None, spec_file=anchor)
        )
        self.upload_inputs = upload_inputs
        self.resume_from = resume_from
        self.report: Report = report or _print
        self.live = live
        self._services: list[TrainingService] = []

    @property
    def profile(self) -> Profile:
        if self._profile is None:
            from majob.spec.profiles import Profile, load_profile

            ref = self._profile_ref
            self._profile = ref if isinstance(ref, Profile) else load_profile(ref)
        return self._profile

    @property
    def name(self) -> str:
        return self.spec.name

    def fingerprint(self) -> Fingerprint:
        return Fingerprint.of(self.spec)

    def plan(self, until: str = "formal", *, start: str = "local") -> list[StagePlan]:
        """What ``run`` would do with each stage, and why."""
        return plan_stages(
            self.ledger,
            self.name,
            self.fingerprint(),
            start=parse_stage(start, "--from"),
            until=parse_stage(until),
        )

    def close(self) -> None:
        """Close the ledger (it opens again when next used) and the clients of the cloud jobs
        this pipeline ran (their ``Job`` handles then no longer reach the service)."""
        self.ledger.close()
        while self._services:
            self._services.pop().close()

    def __enter__(self) -> Pipeline:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def history(self) -> StageRecords:
        """This spec's ledger records, newest first (a table in a notebook)."""
        return StageRecords(self.ledger.records(self.name))

    def run(
        self, until: str = "formal", *, start: str = "local", force_reason: str | None = None
    ) -> PipelineResult:
        """Run the stages from ``start`` to ``until``; skip those that passed for this code and
        spec; stop at the first that fails. ``start`` past local needs the stage before it to
        have passed for this code and spec, or ``force_reason`` (recorded in the ledger)."""
        first, last = parse_stage(start, "--from"), parse_stage(until)
        if STAGES.index(first) > STAGES.index(last):
            raise UserInputError(f"--from {first} comes after --until {last}")
        if force_reason is not None and not force_reason.strip():
            raise UserInputError("--force needs a --reason saying why the gate is overridden")
        fingerprint = self.fingerprint()
        override = ""
        state = gate(self.ledger, self.name, first, fingerprint)
        if not state.open:
            if force_reason is None:
                raise StageRefused(
                    f"{first} refused for {self.name}: {state.why}",
                    hint=f"run the earlier stages ({self._how_to_run(until=first)}), or "
                    "override with --force --reason '...' (recorded in the ledger)",
                )
            override = force_reason.strip()
            self.report(f"[majob] {first}: gate overridden ({state.why}); reason: {override}")
        plans = plan_stages(self.ledger, self.name, fingerprint, start=first, until=last)
        results: list[StageResult] = []
        warned = False
        for plan in plans:
            if plan.action == "skip":
                self.report(f"[majob] {plan.stage}: skipped, {plan.why}")
                results.append(_skipped(plan))
                continue
            if plan.stage != "local" and not warned:
                self._warn_engine()  # before the first cloud stage, once
                warned = True
            self.report(f"[majob] {plan.stage}: runs ({plan.why})")
            result = self._run_stage(
                plan.stage, fingerprint, override if plan.stage == first else ""
            )
            result.why = plan.why
            results.append(result)
            if not result.ok:
                message = f"pipeline stopped: the {plan.stage} stage failed: {result.reason}"
                self._report_emulated(results)
                self.report(f"[majob] {message}")
                return PipelineResult(self.name, results, message)
        if all(r.result == "skipped" for r in results):
            ids = ", ".join(f"{r.stage} #{r.record.id}" for r in results if r.record is not None)
            message = (
                f"nothing to run: {_listed([r.stage for r in results])} passed for this code and "
                f"spec ({ids}); change the code or spec to run again"
            )
        else:
            ran = [r.stage for r in results if r.result != "skipped"]
            before = [r.stage for r in results if r.result == "skipped"]
            message = f"pipeline passed: {_listed(ran)}" + (
                f" ({_listed(before)} passed before)" if before else ""
            )
        self._report_emulated(results)  # before the verdict, which stays the last line
        self.report(f"[majob] {message}")
        return PipelineResult(self.name, results, message)

    def _how_to_run(self, until: Stage) -> str:
        """The command that runs this pipeline up to ``until``: with the spec's own path when
        it came from a file, else the Python call."""
        if not self.spec_path:
            return f"Pipeline(spec).run(until={until!r})"
        return f"majob pipeline {display_path(Path(self.spec_path))} --until {until}"

    def _warn_engine(self) -> None:
        """``majob image check-env`` as a pre-flight warning before a cloud stage."""
        from majob.image.compat import engine_warning

        shown = display_path(Path(self.spec_path)) if self.spec_path else self.name
        warning = engine_warning(self.spec, shown)
        if warning:
            self.report(f"[majob] warning: {warning}")

    def _report_emulated(self, results: Sequence[StageResult]) -> None:
        """Repeat the emulator's notes: a stage it ran proves less than a real one."""
        emulated = [r for r in results if r.emulated]
        if not emulated:
            return
        stages = _listed([r.stage for r in emulated])
        self.report(f"[majob] {stages} ran on the emulator; a real job may still fail:")
        for note in dict.fromkeys(n for r in emulated for n in r.emulated):
            self.report(f"[majob]   {note}")

    def _run_stage(self, stage: Stage, fingerprint: Fingerprint, override: str) -> StageResult:
        recorder = StageRecorder(
            self.ledger, self.name, stage, fingerprint, spec_path=self.spec_path, override=override
        )
        profiled = stage_profiled(self.spec, stage, self.perf)
        try:
            if stage == "local":
                recorder.start()
                outcome = run_local_stage(self.spec, self.report, perf=profiled)
            else:
                outcome = self._run_cloud_stage(stage, fingerprint, recorder)
        except MajobError as error:  # the stage could not start (pre-flight, a profile, ...)
            recorder.failed_to_start(error)
            raise
        except BaseException:  # Ctrl-C: the record says so; a cloud job keeps running
            recorder.stopped("interrupted")
            raise
        outcome, gate = judge_checks(self.spec, stage, outcome, recorder)
        found = None
        if profiled:
            by = "majob pipeline"
            outcome, found = profiled_outcome(self.spec, stage, outcome, self.profile, recorder, by)
        record = recorder.finish(outcome)
        keep_verdict(recorder, gate, self.report)  # in the ledger: the checklist reads it
        if found is not None:
            self._say_profile(stage, outcome, found)
        if outcome.passed:
            last = summary(outcome.metrics)
            shown = ", ".join(f"{k} {v:g}" for k, v in last.items())
            if outcome.step_ms is not None:
                step = f"step p50 {outcome.step_ms[0]:.1f} ms, p95 {outcome.step_ms[1]:.1f} ms"
                shown = f"{shown}, {step}" if shown else step
            self.report(
                f"[majob] {stage}: passed in {outcome.duration:.1f}s"
                + (f" ({shown})" if shown else "")
            )
            if stage == "formal" and record is not None:
                self._say_if_slower(record)
        return StageResult(
            stage,
            "passed" if outcome.passed else "failed",
            reason=outcome.reason,
            duration=outcome.duration,
            outputs=tuple(outcome.outputs),
            series=outcome.metrics,
            record=record,
            emulated=(
                emulator_notes(outcome.lines) if stage != "local" and self.profile.emulated else ()
            ),
            job=outcome.job,
            run=outcome.run,
        )

    def _say_if_slower(self, record: StageRecord) -> None:
        """A formal run more than 20% slower per step than the last formal run of its spec and
        flavor: said in the summary (and flagged by ``majob history``)."""
        from majob.pipeline.steptime import slower_line, slower_than_last

        found = slower_than_last(record, self.ledger.records(self.name, stage="formal"))
        if found is not None:
            self.report(f"[majob] warning: {slower_line(record, *found)}")

    def _say_profile(self, stage: Stage, outcome: Outcome, found: Diagnosis | str) -> None:
        """Where a profiled stage's profile is, what it says and the command that reads it."""
        from majob.perf.setup import diagnosis_lines, local_run_lines
        from majob.perf.staging import profile_line

        if stage != "local":
            self.report(profile_line(self.spec, stage))
            for line in diagnosis_lines(found):
                self.report(f"[majob]   {line}")
        elif outcome.run is not None:
            run = outcome.run
            for line in local_run_lines(run.run_dir, run.output_dirs, True, found):
                self.report(f"[majob] {line}")

    def _run_cloud_stage(
        self, stage: Stage, fingerprint: Fingerprint, recorder: StageRecorder
    ) -> Outcome:
        """Adopt the job a killed run of this stage, code and spec left (``adopt.py``), taking
        its record over; else open a record and submit."""
        from majob.service.submit import plan_submit

        if stage_profiled(self.spec, stage, self.perf):  # staged with the bootstrap
            from majob.perf.staging import staged_for_perf, staging_dir
            from majob.spec.digest import cloud_spec_digest

            staged = staged_for_perf(self.spec, staging_dir(self.spec), stage)
            digest = cloud_spec_digest(self.spec)
            plan = plan_submit(staged, stage, resume_from=self.resume_from, digest=digest)
        else:
            plan = plan_submit(
                self.spec, stage, files=fingerprint.files or None, resume_from=self.resume_from
            )
        left = adopt(recorder, self._service, plan, self.report)
        if left is None:
            recorder.start()
        return run_cloud_stage(
            self.spec,
            plan,
            self.profile,
            self.report,
            upload_inputs=self.upload_inputs,
            left=left,
            on_job=lambda job: self._started(recorder, job),
            live=self.live,
        )

    def _service(self) -> TrainingService:
        """A client of the profile's ModelArts, closed with the pipeline."""
        from majob.service.connect import open_service

        service = open_service(self.profile)
        self._services.append(service)
        return service

    def _started(self, recorder: StageRecorder, job: Job) -> None:
        recorder.job(job.id)
        if job.service is not None and job.service not in self._services:
            self._services.append(job.service)


def _skipped(plan: StagePlan) -> StageResult:
    record = plan.record
    assert record is not None  # a skipped stage always has the record it passed in
    return StageResult(
        plan.stage,
        "skipped",
        why=plan.why,
        duration=record.duration,
        outputs=record.outputs,
        series={k: dict(v) for k, v in record.metrics.items()},
        record=record,
    )


def _listed(stages: list[str]) -> str:
    if len(stages) <= 1:
        return "".join(stages)
    return ", ".join(stages[:-1]) + " and " + stages[-1]


def _print(line: str) -> None:
    print(line, flush=True)

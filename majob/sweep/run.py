"""``majob.Sweep``: a sweep's loop. The trial template is smoke-run locally first (the local
stage of the pipeline, with its gate and ledger), then trials are asked of Optuna, submitted as
jobs ``<name>-t<k>`` through the one submit path, and followed ``parallel`` at a time.

::

    spec ─▶ local smoke (skipped if it passed for this code + spec) ─▶ while trials remain:
        ask ─▶ submit <name>-t<k> ─▶ poll: report steps, prune (stop the job) ─▶ tell

Every step is in the study (``store.py``) as it happens, so a sweep whose process dies goes on
with ``resume``: a trial whose job was created is followed, never submitted again (one whose
create may have landed unrecorded is looked up by its name first).
"""

from __future__ import annotations

import os
import time
import warnings
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import MajobError, StageRefused, UserInputError
from majob.pipeline.ledger import Ledger
from majob.spec.fields import Scalar
from majob.spec.load import display_path, load_spec
from majob.spec.models import JobSpec, Stage
from majob.spec.set_checks import SetWarning, sweep_set_warnings
from majob.spec.sweep import Sweep as SweepBlock
from majob.sweep import control, store
from majob.sweep.ctrl_c import ctrl_c_kept
from majob.sweep.results import SweepResult, rows_of
from majob.sweep.space import SWEEP_ANNOTATION, job_name, shown, suggest, trial_spec
from majob.sweep.trial import ActiveTrial

if TYPE_CHECKING:
    import optuna

    from majob.service.base import Job, TrainingService
    from majob.spec.profiles import Profile

Report = Callable[[str], None]
POLL_SECONDS = 0.25


class Sweep:
    """The sweep of one spec file (its ``sweep:`` block); ``trials``, ``parallel`` and
    ``stage`` override the block's. ``run()`` starts a sweep, ``resume(id)`` goes on with one.
    ``warn``: each of ``overrides`` that would not do what it says (a searched hyperparameter, one
    a stage overrides, one the code does not define) is a ``SetWarning``; the CLI prints them."""

    def __init__(
        self,
        spec: str | os.PathLike[str],
        *,
        profile: str | None = None,
        trials: int | None = None,
        parallel: int | None = None,
        stage: str | None = None,
        overrides: Sequence[str] = (),
        ledger: str | os.PathLike[str] | None = None,
        upload_inputs: bool = False,
        report: Report | None = None,
        on_change: Callable[[SweepResult], None] | None = None,
        warn: bool = True,
    ) -> None:
        self.spec_path = Path(spec).resolve()
        self.profile_name = profile
        self.overrides = tuple(overrides)
        # Loaded by the path as given: a message names the file as the user wrote it.
        self.spec = load_spec(Path(spec), overrides=overrides, profile=profile)
        if self.spec.sweep is None:
            raise UserInputError(
                f"{display_path(Path(spec))} has no sweep: block",
                hint="add sweep: {space: ..., objective: ...} (see docs/sweep.md)",
            )
        self.block = _overridden(self.spec.sweep, trials, parallel, stage)
        _recheck(self.spec, self.block)
        # Each override that would not do what it says: the CLI prints them (warn=False), the
        # Python API warns (SetWarning) at the caller.
        flag = "override" if warn else "--set"
        self.set_warnings = sweep_set_warnings(self.spec, overrides, self.stage, flag)
        for line in self.set_warnings if warn else ():
            warnings.warn(line, SetWarning, stacklevel=2)
        self.ledger = Ledger(Path(ledger) if ledger else None, spec_file=self.spec_path)
        self.upload_inputs = upload_inputs
        self.report: Report = report or _print
        self.on_change = on_change

    @property
    def stage(self) -> Stage:
        return self.block.stage

    def run(self) -> SweepResult:
        """Smoke-run the template locally, then run every trial; the sweep's results."""
        from majob.pipeline.digests import Fingerprint
        from majob.sweep.unfinished import left_unfinished

        self._smoke()
        fingerprint = Fingerprint.of(self.spec)
        info = store.SweepInfo(
            id=store.new_sweep_id(self.spec.name),
            spec=str(self.spec_path),
            name=self.spec.name,
            stage=self.stage,
            trials=self.block.trials,
            parallel=self.block.parallel,
            profile=self.profile_name,
            goal=self.block.objective.goal,
            metric=self.block.objective.metric,
            overrides=self.overrides,
            spec_digest=fingerprint.spec_digest,
            code_digest=fingerprint.code_digest,
        )
        with store.opened(self.sweeps_file) as storage:
            left = left_unfinished(storage, info, self.sweeps_file)
            if left is not None:  # a killed run's: its trials are adopted, not submitted again
                self.report(
                    f"[majob] sweep {left.study_name}: left unfinished by a run that died, for "
                    "this code and spec; going on with it"
                )
                return _Loop(self, left, store.SweepInfo.from_study(left)).run()
            study = store.create_study(
                storage,
                info,
                seed=self.block.seed,
                prune=self.block.prune,
                startup=self.block.prune_startup,
                warmup=self.block.prune_after,
            )
            self.report(f"[majob] sweep {info.id}: {info.trials} trials, {info.parallel} at once")
            return _Loop(self, study, info).run()

    @staticmethod
    def resume(
        sweep_id: str, *, ledger: str | os.PathLike[str] | None = None, report: Report | None = None
    ) -> SweepResult:
        """Go on with sweep ``sweep_id`` after its process died (``majob sweep resume``)."""
        return resume(sweep_id, ledger=ledger, report=report)

    @staticmethod
    def status(sweep_id: str, *, ledger: str | os.PathLike[str] | None = None) -> SweepResult:
        """Every trial of ``sweep_id`` as recorded (``majob sweep status``)."""
        return control.status(sweep_id, ledger=ledger)

    @property
    def sweeps_file(self) -> Path:
        return store.sweeps_path(self.ledger.path)

    def _smoke(self) -> None:
        """The trial template's local stage (debug sweeps), or the formal gate (formal ones)."""
        from majob.pipeline.flow import Pipeline
        from majob.pipeline.gate import gate

        pipeline = Pipeline(
            self.spec, profile=self.profile_name, ledger=self.ledger, report=self.report
        )
        pipeline.spec_path = str(self.spec_path)
        if self.stage == "formal":
            state = gate(self.ledger, self.spec.name, "formal", pipeline.fingerprint())
            if not state.open:
                raise StageRefused(
                    f"formal sweep refused for {self.spec.name}: {state.why}",
                    hint=f"majob pipeline {display_path(self.spec_path)} --until debug",
                )
            return
        self.report("[majob] smoke: the trial template runs locally first")
        result = pipeline.run(until="local")
        if not result.ok:
            raise StageRefused(
                f"the trial template failed locally, so no trial was submitted: {result.message}",
                hint=f"fix it and run `majob run {display_path(self.spec_path)}`",
            )


def resume(
    sweep_id: str,
    *,
    ledger: str | os.PathLike[str] | None = None,
    report: Report | None = None,
    on_change: Callable[[SweepResult], None] | None = None,
) -> SweepResult:
    """Go on with sweep ``sweep_id``: follow the trials left running, run those remaining."""
    with store.opened(control.sweeps_file(ledger)) as storage:
        study = store.load_study(storage, sweep_id)
        info = store.SweepInfo.from_study(study)
        sweep = Sweep(
            info.spec,
            profile=info.profile,
            trials=info.trials,
            parallel=info.parallel,
            stage=info.stage,
            overrides=info.overrides,
            ledger=ledger,
            report=report,
            on_change=on_change,
        )
        return _Loop(sweep, study, info).run()


class _Loop:
    """Keeps ``parallel`` trials running until ``trials`` were asked and all ended."""

    def __init__(self, sweep: Sweep, study: optuna.Study, info: store.SweepInfo) -> None:
        self.sweep, self.study, self.info = sweep, study, info
        self.active: list[ActiveTrial] = []
        self.profile = _profile(info.profile)  # read once: every trial submits with it

    def run(self) -> SweepResult:
        with store.running(self.sweep.sweeps_file, self.info.id):
            return self._run()

    def _run(self) -> SweepResult:
        from majob.service.connect import open_service

        service = open_service(self.profile)
        try:
            with ctrl_c_kept():
                self._rounds(service)
        except (KeyboardInterrupt, MajobError) as stopped:
            # Ctrl-C, or a trial that could not be submitted: the running ones go on.
            running = ", ".join(t.job.name for t in self.active) or "none"
            why = "interrupted" if isinstance(stopped, KeyboardInterrupt) else "stopped"
            self.sweep.report(
                f"[majob] {why}: trials left running ({running}); go on with "
                f"`majob sweep resume {self.info.id}`, or stop them with "
                f"`majob sweep stop {self.info.id}`"
            )
            raise
        finally:
            service.close()
        result = self.result()
        self.sweep.report(f"[majob] {result.summary}")
        return result

    def _rounds(self, service: TrainingService) -> None:
        """Start trials while slots are free, and poll the running ones, until all have ended."""
        self._adopt(service)
        while True:
            while len(self.active) < self.info.parallel and self._asked() < self.info.trials:
                self._start(service)
            if not self.active:
                return
            began = time.monotonic()
            if any([t.poll(service, self.study) for t in self.active]):
                self._ended()
                self._changed()
            if self._slot_free():
                continue  # a trial ended: the next starts (or the sweep ends) now
            # One round every POLL_SECONDS, however long the round's requests took: a
            # trial's end is seen as soon as a wait on its own job would see it.
            time.sleep(max(0.0, POLL_SECONDS - (time.monotonic() - began)))

    def result(self) -> SweepResult:
        phases = {t.number: t.phase for t in self.active}
        return SweepResult(self.info, rows_of(self.study, phases))

    def _slot_free(self) -> bool:
        """No trial left running, or room for one more that is still to be asked."""
        return not self.active or (
            len(self.active) < self.info.parallel and self._asked() < self.info.trials
        )

    def _asked(self) -> int:
        return len(self.study.get_trials(deepcopy=False))

    def _ended(self) -> None:
        for trial in [t for t in self.active if t.ended]:
            self.active.remove(trial)
            what = (
                f"{trial.sweep.objective.metric} {trial.objective:g}"
                if trial.objective is not None
                else trial.reason
            )
            self.sweep.report(f"[majob] {trial.job.name}: {trial.ended.lower()}: {what}")

    def _changed(self) -> None:
        if self.sweep.on_change is not None:
            self.sweep.on_change(self.result())

    def _start(self, service: TrainingService) -> None:
        import optuna

        trial = self.study.ask()
        values = suggest(trial, self.sweep.block.space)
        trial.set_user_attr("job_name", job_name(self.info.name, trial.number, self.sweep.stage))
        try:
            job = self._submit(service, trial.number, values)
        except MajobError as error:
            trial.set_user_attr("reason", f"not submitted: {error.message.splitlines()[0]}")
            self.study.tell(trial, state=optuna.trial.TrialState.FAIL)
            raise
        self._follow(trial, job)

    def _submit(self, service: TrainingService, number: int, values: Mapping[str, Scalar]) -> Job:
        from majob.service.submit import plan_submit, submit_plan

        spec = trial_spec(self.sweep.spec, self.sweep.stage, number, values)
        plan = plan_submit(spec, self.sweep.stage)
        metadata = plan.body["metadata"]
        annotations = {**metadata.get("annotations", {}), SWEEP_ANNOTATION: self.info.id}
        plan = replace(
            plan, body={**plan.body, "metadata": {**metadata, "annotations": annotations}}
        )
        job = submit_plan(
            plan,
            self.profile,
            service=lambda: service,
            upload_inputs=self.sweep.upload_inputs and number == 0,
            report=lambda line: self.sweep.report(f"[majob] {line}"),
        )
        self.sweep.report(f"[majob] {job.name}: submitted as job {job.id} ({shown(values)})")
        return job

    def _follow(self, trial: optuna.Trial, job: Job) -> None:
        trial.set_user_attr("job_id", job.id)
        if trial.user_attrs.get("job_name") != job.name:  # renamed: an ended job held the name
            trial.set_user_attr("job_name", job.name)
        self.active.append(
            ActiveTrial(
                trial,
                job,
                self.sweep.block,
                dict(self.sweep.spec.metrics),
                masker=self.sweep.spec.from_environ.masker(),
            )
        )
        self._changed()

    def _adopt(self, service: TrainingService) -> None:
        """Follow the trials a dead sweep process left running; submit the one it asked but
        may not have created (unless its job is found by name)."""
        import optuna

        for frozen in self.study.get_trials(states=(optuna.trial.TrialState.RUNNING,)):
            trial = optuna.Trial(self.study, frozen._trial_id)
            job_id = frozen.user_attrs.get("job_id")
            if job_id:
                job = service.get(str(job_id))
            else:
                job = _found(service, str(frozen.user_attrs.get("job_name", ""))) or self._submit(
                    service, frozen.number, dict(frozen.params)
                )
            self.sweep.report(f"[majob] {job.name}: following job {job.id} ({job.phase})")
            self._follow(trial, job)


def _found(service: TrainingService, name: str) -> Job | None:
    from majob.service.jobnames import jobs_named_like

    return (
        next((j for j in jobs_named_like(service, name) if j.name == name), None) if name else None
    )


def _overridden(
    block: SweepBlock, trials: int | None, parallel: int | None, stage: str | None
) -> SweepBlock:
    update: dict[str, object] = {}
    if trials is not None:
        update["trials"] = trials
    if parallel is not None:
        update["parallel"] = parallel
    if stage is not None:
        if stage not in ("debug", "formal"):
            raise UserInputError(f"--stage {stage!r}: a sweep runs at debug or formal")
        update["stage"] = stage
    if not update:
        return block
    try:
        return SweepBlock.model_validate({**block.model_dump(), **update})
    except ValueError as error:
        raise UserInputError(f"sweep: {str(error).splitlines()[-1].strip()}") from None


def _recheck(spec: JobSpec, block: SweepBlock) -> None:
    """The command line's --trials/--parallel/--stage meet the same rules as the spec's."""
    from majob.spec.sweep import sweep_problems

    resources = spec.at_stage(block.stage).resources
    problems = sweep_problems(block, spec.metrics, spec.channel_names, resources)
    if problems:
        raise UserInputError("; ".join(message for _, message in problems))


def _profile(name: str | None) -> Profile:
    from majob.spec.profiles import load_profile

    return load_profile(name)


def _print(line: str) -> None:
    print(line, flush=True)

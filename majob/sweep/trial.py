"""One running trial: its job, read a poll at a time (phase, new log lines), its objective
reported to Optuna step by step, stopped through the service when the pruner says so.

Each value of the objective metric in the log is a step (``trial.report(value, step)``): the
median rule compares a trial with the others at the same step. A trial ends ``COMPLETE`` with
its objective, ``PRUNED`` (its job stopped), or ``FAIL`` with the reason kept as the trial's
``reason`` attribute: the job failed, or it completed without reporting the metric.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from majob.errors import ServiceUnreachable
from majob.masking import Masker
from majob.pipeline.metrics import MetricReader
from majob.service.logs import LogCursor
from majob.service.watch import read_job, wait_patience
from majob.spec.sweep import Sweep
from majob.sweep.space import objective_series, objective_value

if TYPE_CHECKING:
    import optuna

    from majob.service.base import Job, TrainingService

TAIL = 5  # log lines kept for a failed trial's reason
# The platform's own lines ("training end with exit code 3") say less than the script's last.
SERVICE_LOG = "[ModelArts Service Log]"


@dataclass
class ActiveTrial:
    """A trial whose job runs: what has been read of it so far."""

    trial: optuna.Trial
    job: Job
    sweep: Sweep
    metrics: dict[str, str]
    masker: Masker = field(default_factory=Masker)
    phase: str = ""
    ended: str = ""  # COMPLETE, PRUNED or FAIL once told
    reason: str = ""
    objective: float | None = None

    def __post_init__(self) -> None:
        self.cursor = LogCursor(self.job.id, prefix=True)
        self.reader = MetricReader(self.metrics)
        self.tail: list[str] = []
        self.phase = self.job.phase
        # A resumed trial reads its log from the start again: the steps told before are
        # skipped (Optuna warns about a step reported twice).
        told = self.trial.storage.get_trial(self.trial._trial_id).intermediate_values
        self.told = set(told)
        self.lost_since: float | None = None  # when polls began to fail to reach the service

    @property
    def number(self) -> int:
        return int(self.trial.number)

    def values(self) -> list[float]:
        return objective_series(self.reader.series, self.sweep.objective.metric)

    def poll(self, service: TrainingService, study: optuna.Study) -> bool:
        """Read the job once; report new values, prune or end the trial. True when the phase or
        the objective so far changed (the table is drawn again)."""
        before = (self.phase, len(self.values()))
        try:
            job, lines = read_job(service, self.job.id, self.cursor, self.masker)
        except ServiceUnreachable:
            # The next poll tries again, for as long as a wait would (MAJOB_WAIT_PATIENCE);
            # then the sweep stops, saying how to resume: the jobs may well be running.
            now = time.monotonic()
            self.lost_since = self.lost_since if self.lost_since is not None else now
            if now - self.lost_since >= wait_patience():
                raise
            return False
        self.lost_since = None
        for line in lines:
            self.reader.feed(line)
            if SERVICE_LOG not in line:
                self.tail = [*self.tail, line.partition("] ")[2] or line][-TAIL:]
        self.job, self.phase = job, job.phase
        self._report_new()
        if job.finished:
            self._end(study)
        elif self.sweep.prune != "none" and self.trial.should_prune():
            self._prune(service, study)
        return self.ended != "" or before != (self.phase, len(self.values()))

    def _report_new(self) -> None:
        for step, value in enumerate(self.values()):
            if step not in self.told:
                self.trial.report(value, step)
                self.told.add(step)

    def _prune(self, service: TrainingService, study: optuna.Study) -> None:
        import optuna

        values = self.values()
        stopped = service.terminate(self.job.id)
        self.phase = stopped.phase
        self.reason = (
            f"pruned at step {len(values) - 1} ({self.sweep.objective.metric} {values[-1]:g}, "
            "worse than the median); its job was stopped"
        )
        self._tell(study, optuna.trial.TrialState.PRUNED)

    def _end(self, study: optuna.Study) -> None:
        import optuna

        metric = self.sweep.objective.metric
        if not self.job.succeeded:
            failed = self.job.failed_task()
            code = f", exit code {failed.exit_code}" if failed and failed.exit_code else ""
            last = self.tail[-1].strip() if self.tail else "no log"
            self.reason = f"job {self.job.phase_label}{code}; last line: {last}"
            self._tell(study, optuna.trial.TrialState.FAIL)
            return
        value = objective_value(self.values(), self.sweep.objective)
        if value is None:
            self.reason = (
                f"the job completed but never reported {metric!r}: no log line matched "
                f"metrics.{metric} ({self.metrics[metric]!r})"
            )
            self._tell(study, optuna.trial.TrialState.FAIL)
            return
        self.objective = value
        self._tell(study, optuna.trial.TrialState.COMPLETE, value)

    def _tell(
        self, study: optuna.Study, state: optuna.trial.TrialState, value: float | None = None
    ) -> None:
        if self.reason:
            self.trial.set_user_attr("reason", self.reason)
        self.trial.set_user_attr("phase", self.phase)
        study.tell(self.trial, value, state=state)
        self.ended = state.name

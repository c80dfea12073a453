"""What a pipeline run returns: each stage's ``StageResult`` and the run's ``PipelineResult``
(shown as cards in a notebook, ``majob.notebook``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from majob import display
from majob.pipeline.ledger_schema import StageRecord
from majob.pipeline.metrics import Series

if TYPE_CHECKING:
    from majob.runner.result import RunResult
    from majob.service.base import Job


@dataclass
class StageResult:
    """One stage of a pipeline run: ``result`` is passed, failed or skipped (passed before for
    this code and spec; ``record`` is that run's ledger record)."""

    stage: str
    result: str
    why: str = ""  # why it ran, or why it was skipped
    reason: str = ""  # why it failed
    duration: float | None = None
    outputs: tuple[str, ...] = ()
    series: Series = field(default_factory=dict)
    record: StageRecord | None = None
    job: Job | None = None
    run: RunResult | None = None
    # On the emulator: which engine it stood in for and what it did not check (from the log).
    emulated: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        return self.result in ("passed", "skipped")

    @property
    def job_id(self) -> str:
        if self.job is not None:
            return self.job.id
        return self.record.job_id if self.record is not None else ""

    def metrics(self) -> Any:
        """Each node's metric series: a pandas DataFrame (node, metric, step, value) when pandas
        is installed, else ``{node: {metric: [values]}}``."""
        return display.metrics(self)

    def plot(self, metric: str | None = None) -> Any:
        """Draw the series with matplotlib (``pip install 'majob[plot]'``); the Axes."""
        return display.plot(self, metric)

    def __repr__(self) -> str:
        job = f", job {self.job_id}" if self.job_id else ""
        reason = f": {self.reason}" if self.reason else ""
        return (
            f"<StageResult {self.stage} {self.result} in {display.seconds(self.duration)}"
            f"{job}{reason}>"
        )

    def _repr_html_(self) -> str | None:
        return display.html(self)


@dataclass
class PipelineResult:
    """What one ``Pipeline.run`` did, stage by stage; ``message`` says how it ended."""

    spec_name: str
    stages: list[StageResult]
    message: str

    @property
    def ok(self) -> bool:
        return all(stage.ok for stage in self.stages)

    @property
    def failed(self) -> StageResult | None:
        return next((s for s in self.stages if not s.ok), None)

    def __getitem__(self, stage: str) -> StageResult:
        for result in self.stages:
            if result.stage == stage:
                return result
        raise KeyError(stage)

    def __repr__(self) -> str:
        stages = ", ".join(f"{s.stage} {s.result}" for s in self.stages)
        return f"<PipelineResult {self.spec_name}: {stages}>"

    def _repr_html_(self) -> str | None:
        return display.html(self)

"""The notebook side: Jupyter displays, metric frames and plots of majob's values.

``RunResult``, ``Job``, ``StageResult``, ``PipelineResult`` and the lists ``majob.jobs()`` and
``pipeline.history()`` return hand their views to ``majob.display``; this package registers
what draws them (it imports them, never the reverse): compact cards (``cards``) and tables
(``tables``) built of inline-styled pieces (``blocks``), with a small plot of each metric (an
inline SVG, so no plotting library is needed to see it); ``metrics()`` as a pandas DataFrame
when pandas is installed and a plain mapping otherwise, and ``plot()`` (``pip install
'majob[plot]'``) (``series``). The façade imports this package the first time a view is asked
for.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from majob import display
from majob.notebook.cards import job_html, pipeline_result_html, run_result_html, stage_result_html
from majob.notebook.series import job_series, plot_series, series_frame, sparkline
from majob.notebook.tables import history_html, jobs_html
from majob.perf.html import fragment as perf_fragment
from majob.perf.report import Diagnosis
from majob.pipeline.ledger_schema import StageRecords
from majob.pipeline.results import PipelineResult, StageResult
from majob.runner.result import RunResult
from majob.service.base import Job, JobList

__all__ = ["job_series", "plot_series", "series_frame", "sparkline"]


def job_metrics(
    job: Job, definitions: Mapping[str, str] | None = None, *, usage: bool = False
) -> Any:
    return series_frame(job_series(job, definitions, usage=usage))


def job_plot(
    job: Job, metric: str | None = None, definitions: Mapping[str, str] | None = None
) -> Any:
    return plot_series(job_series(job, definitions), metric, title=job.name)


def stage_metrics(result: StageResult) -> Any:
    return series_frame(result.series)


def stage_plot(result: StageResult, metric: str | None = None) -> Any:
    return plot_series(result.series, metric, title=f"{result.stage} stage")


display.register(RunResult, html=run_result_html)
display.register(Job, html=job_html, metrics=job_metrics, plot=job_plot)
display.register(StageResult, html=stage_result_html, metrics=stage_metrics, plot=stage_plot)
display.register(PipelineResult, html=pipeline_result_html)
display.register(StageRecords, html=history_html)
display.register(JobList, html=jobs_html)
display.register(Diagnosis, html=perf_fragment)

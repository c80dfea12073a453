"""The notebook side: Jupyter displays, metric frames and plots of majob's values.

``RunResult``, ``Job``, ``StageResult`` and ``PipelineResult`` hand their views to
``majob.display``; this module registers what draws them (it imports them, never the reverse):
a ``_repr_html_`` table with the outputs and a small metrics plot (an inline SVG, so no plotting
library is needed to see it), ``metrics()`` as a pandas DataFrame when pandas is installed and
a plain mapping otherwise, and ``plot()`` (``pip install 'majob[plot]'``). The façade imports
this module the first time a view is asked for.
"""

from __future__ import annotations

import contextlib
import html
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from majob import display
from majob.errors import UserInputError
from majob.pipeline.flow import PipelineResult, StageResult
from majob.pipeline.ledger import Ledger
from majob.pipeline.metrics import read_metrics
from majob.runner.result import RunResult
from majob.service.base import Job

SeriesMap = Mapping[str, Mapping[str, Sequence[float]]]


# -- metrics -----------------------------------------------------------------------------------


def series_frame(series: SeriesMap) -> Any:
    """``{node: {metric: [values]}}`` as a pandas DataFrame (columns node, metric, step, value)
    when pandas is installed, else as a plain dict of lists."""
    plain = {node: {name: list(values) for name, values in m.items()} for node, m in series.items()}
    try:
        import pandas  # type: ignore[import-untyped]
    except ImportError:
        return plain
    rows = [
        (node, name, step, value)
        for node, metrics in plain.items()
        for name, values in metrics.items()
        for step, value in enumerate(values)
    ]
    return pandas.DataFrame(rows, columns=["node", "metric", "step", "value"])


def plot_series(series: SeriesMap, metric: str | None = None, *, title: str = "") -> Any:
    """Each node's series of ``metric`` (every metric when None) against its step; the Axes."""
    try:
        import matplotlib.pyplot as plt
    except ImportError:
        raise UserInputError(
            "plot() needs matplotlib", hint="pip install 'majob[plot]' (or matplotlib)"
        ) from None
    names = sorted({name for m in series.values() for name in m})
    if metric is not None:
        if metric not in names:
            shown = ", ".join(names) or "none"
            raise UserInputError(f"no metric {metric!r} was recorded (recorded: {shown})")
        names = [metric]
    if not names:
        raise UserInputError(
            "no metrics were recorded", hint="define them under metrics: in the spec"
        )
    _, axes = plt.subplots(figsize=(5, 3))
    for node in sorted(series):
        for name in names:
            values = list(series[node].get(name, ()))
            if values:
                axes.plot(range(len(values)), values, marker=".", label=f"{name} ({node})")
    axes.set_xlabel("step")
    axes.set_title(title)
    axes.legend()
    return axes


def sparkline(values: Sequence[float], *, width: int = 120, height: int = 28) -> str:
    """A tiny inline SVG of ``values`` (empty for fewer than two)."""
    if len(values) < 2:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1.0
    step = (width - 4) / (len(values) - 1)
    points = " ".join(
        f"{2 + i * step:.1f},{height - 2 - (v - low) / span * (height - 4):.1f}"
        for i, v in enumerate(values)
    )
    return (
        f'<svg width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg">'
        f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{points}"/></svg>'
    )


def _metrics_cells(series: SeriesMap) -> str:
    rows = []
    for node in sorted(series):
        for name, values in sorted(series[node].items()):
            if values:
                rows.append(
                    f"<tr><td>{html.escape(name)} ({html.escape(node)})</td>"
                    f"<td>{values[-1]:g}</td><td>{sparkline(list(values))}</td></tr>"
                )
    return "".join(rows)


def _table(title: str, rows: Sequence[tuple[str, str]], series: SeriesMap | None = None) -> str:
    body = "".join(f"<tr><th style='text-align:left'>{k}</th><td>{v}</td></tr>" for k, v in rows)
    metrics = _metrics_cells(series or {})
    if metrics:
        body += (
            f"<tr><th style='text-align:left'>metrics</th><td><table>{metrics}</table></td></tr>"
        )
    return f"<table><caption style='text-align:left'><b>{title}</b></caption>{body}</table>"


def _files(files: Sequence[str], limit: int = 8) -> str:
    shown = ", ".join(html.escape(f) for f in files[:limit])
    more = f" and {len(files) - limit} more" if len(files) > limit else ""
    return (shown + more) or "-"


# -- RunResult (the local stage) ----------------------------------------------------------------


def run_result_html(result: RunResult) -> str:
    rows = [
        ("stage", html.escape(result.stage)),
        ("status", html.escape(result.status)),
        ("duration", display.seconds(result.duration)),
        ("run", html.escape(result.run_id)),
        ("outputs", _files([f"{o.channel}/{o.path}" for o in result.outputs])),
        ("logs", html.escape(str(Path(result.run_dir) / "logs"))),
    ]
    return _table("majob local run", rows)


# -- Job (a cloud job) ----------------------------------------------------------------------------


def job_html(job: Job) -> str:
    rows = [
        ("job", html.escape(f"{job.name} ({job.id})")),
        (
            "phase",
            html.escape(job.phase + (f" ({job.secondary_phase})" if job.secondary_phase else "")),
        ),
        ("duration", display.seconds(job.duration_ms / 1000)),
        ("flavor", html.escape(job.flavor or "-")),
        ("nodes", str(job.node_count)),
    ]
    series: SeriesMap = {}
    with contextlib.suppress(UserInputError):  # not in the ledger: shown without metrics
        series = job_series(job)
    return _table("ModelArts job", rows, series)


def job_series(
    job: Job, definitions: Mapping[str, str] | None = None, *, ledger: Path | None = None
) -> dict[str, dict[str, list[float]]]:
    """The job's metric series: read from its log with ``definitions``, or (without them) as
    the pipeline recorded them in the ledger."""
    if definitions is not None:
        return read_metrics(definitions, job.logs())
    with Ledger(ledger) as opened:
        record = opened.by_job(job.id)
    if record is None:
        raise UserInputError(
            f"job {job.id} is not in the ledger, so its metrics are unknown",
            hint="pass definitions, e.g. job.metrics({'loss': 'loss=([0-9.]+)'})",
        )
    return {node: {k: list(v) for k, v in m.items()} for node, m in record.metrics.items()}


# -- pipeline results -----------------------------------------------------------------------------


def stage_result_html(result: StageResult) -> str:
    rows = [
        ("stage", html.escape(result.stage)),
        ("result", html.escape(result.result)),
        ("duration", display.seconds(result.duration)),
    ]
    if result.job_id:
        phase = f" ({result.job.phase})" if result.job is not None else ""
        rows.append(("job", html.escape(result.job_id + phase)))
    if result.why:
        rows.append(("why", html.escape(result.why)))
    if result.reason:
        rows.append(("reason", html.escape(result.reason)))
    rows.append(("outputs", _files(result.outputs)))
    return _table(f"{result.stage} stage", rows, result.series)


def pipeline_result_html(result: PipelineResult) -> str:
    parts = [f"<p><b>{html.escape(result.spec_name)}</b>: {html.escape(result.message)}</p>"]
    parts += [stage_result_html(stage) for stage in result.stages]
    return "".join(parts)


# -- what each value offers (``majob.display`` hands the views here) -------------------------


def job_metrics(job: Job, definitions: Mapping[str, str] | None = None) -> Any:
    return series_frame(job_series(job, definitions))


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

"""Metric series as a notebook shows them: a DataFrame (or a plain mapping), a matplotlib plot,
a tiny inline SVG for the cards, and a job's series as the pipeline recorded them."""

from __future__ import annotations

import contextlib
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from majob.errors import UserInputError
from majob.pipeline.ledger import Ledger
from majob.pipeline.metrics import read_metrics
from majob.service.base import Job

SeriesMap = Mapping[str, Mapping[str, Sequence[float]]]


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


def sparkline(values: Sequence[float], *, width: int = 90, height: int = 20) -> str:
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
        f'<svg width="{width}" height="{height}" xmlns="http://www.w3.org/2000/svg" '
        f'style="vertical-align:middle;width:{width}px;height:{height}px">'
        f'<polyline fill="none" stroke="#1f77b4" stroke-width="1.5" points="{points}"/></svg>'
    )


USAGE_SHOWN = ("cpuUsage", "memUsage")  # what the service measures on every flavor


def job_series(
    job: Job,
    definitions: Mapping[str, str] | None = None,
    *,
    ledger: Path | None = None,
    usage: bool = False,
) -> dict[str, dict[str, list[float]]]:
    """The job's metric series: read from its log with ``definitions``, or (without them) as
    the pipeline recorded them in the ledger; with ``usage``, the service's measured CPU and
    memory per minute beside them (then a job outside the ledger shows those alone)."""
    if usage:
        with contextlib.suppress(UserInputError):
            logged = job_series(job, definitions, ledger=ledger)
            return _with_usage(logged, job)
        return _with_usage({}, job)
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


def _with_usage(
    series: dict[str, dict[str, list[float]]], job: Job
) -> dict[str, dict[str, list[float]]]:
    """``series`` with each task's measured ``cpuUsage`` and ``memUsage`` (minutes the service
    did not measure left out)."""
    for task, measured in job.usage().items():
        node = series.setdefault(task, {})
        for name in USAGE_SHOWN:
            node[name] = [v for v in measured.get(name, []) if v >= 0]
    return series

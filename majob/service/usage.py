"""Reading the service's measured use of a job's task (``ShowTrainingJobMetrics``), which the
REST client and the notebook SDK's ``get_job_metrics`` answer in the same shape."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def read_usage(answer: Any) -> dict[str, list[float]]:
    """``{metric: [per-minute values]}`` from ``{"metrics": [{"metric", "value": [...]}]}``."""
    series: dict[str, list[float]] = {}
    items = answer.get("metrics") if isinstance(answer, Mapping) else None
    for item in items or []:
        if isinstance(item, Mapping) and isinstance(item.get("value"), list):
            series[str(item.get("metric"))] = [float(v) for v in item["value"]]
    return series

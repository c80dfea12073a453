"""Metrics read from the log by regex, as SageMaker's metric definitions do.

``metrics: {loss: 'loss=([0-9.]+)'}`` in the spec names a regex with one group; every log line
that matches adds the group's number to that metric's series. Lines carry their node as the
``[worker-i] `` prefix the local stage and ``majob logs`` print, so each node keeps its own
series: ``{"worker-0": {"loss": [2.3, 1.1, ...]}}``.

The node bootstrap's step-time line (``[majob] step time: 35.2 ms (median of steps 81-120,
rank 0)``, ``majob/perf/steplog.py``) is read too, into ``step_ms`` (each node's latest), never
into a metric's series: ``metrics:`` and ``expect.log_*`` see only the spec's own regexes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from majob.perf.steplog import MARKER, parse_step_line

Series = dict[str, dict[str, list[float]]]  # node -> metric -> values, in log order

_PREFIX = re.compile(r"^\[(worker-\d+)\] ?")


class MetricReader:
    """Feeds log lines in, one at a time (so a live stage is read as it runs)."""

    def __init__(self, definitions: Mapping[str, str]) -> None:
        self._patterns = {name: re.compile(pattern) for name, pattern in definitions.items()}
        self.series: Series = {}
        self.step_ms: dict[str, float] = {}  # node -> the last step time its log said

    def feed(self, line: str, node: str | None = None) -> None:
        if not self._patterns and MARKER not in line:
            return
        if node is None:
            match = _PREFIX.match(line)
            node = match.group(1) if match else "worker-0"
            if match:
                line = line[match.end() :]
        said = parse_step_line(line)
        if said is not None:
            self.step_ms[node] = said.ms
            return
        for name, pattern in self._patterns.items():
            found = pattern.search(line)
            if found is None:
                continue
            try:
                value = float(found.group(1))
            except (TypeError, ValueError):  # the group matched something that is no number
                continue
            self.series.setdefault(node, {}).setdefault(name, []).append(value)


def read_metrics(definitions: Mapping[str, str], lines: Iterable[str]) -> Series:
    """The series of ``lines`` (``[worker-i]``-prefixed, or all one node's)."""
    reader = MetricReader(definitions)
    for line in lines:
        reader.feed(line)
    return reader.series


def summary(series: Mapping[str, Mapping[str, list[float]]]) -> dict[str, float]:
    """Each metric's last value on the first node that reported it (worker-0 first)."""
    out: dict[str, float] = {}
    for node in sorted(series, key=node_order):
        for name, values in series[node].items():
            if values and name not in out:
                out[name] = values[-1]
    return out


def step_time(reader: MetricReader) -> float | None:
    """The last step time the first node (worker-0 first) said, if any has."""
    for node in sorted(reader.step_ms, key=node_order):
        return reader.step_ms[node]
    return None


def node_order(node: str) -> tuple[int, str]:
    """``worker-0``, ``worker-1``, ..., ``worker-10`` (by number), then any other name."""
    _, _, index = node.rpartition("-")
    return (int(index) if index.isdigit() else 1 << 30, node)

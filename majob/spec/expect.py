"""The spec's ``metrics:`` patterns and ``expect:`` checks: what the pipeline reads from a log and
what every stage must pass (``pipeline/expect.py`` applies them).
"""

from __future__ import annotations

import re
from typing import Annotated

from pydantic import AfterValidator, Field

from majob.spec.fields import SpecModel
from majob.spec.perf_expect import PerfExpect
from majob.spec.precision_gate import PrecisionGate


def _metric_pattern(value: str) -> str:
    try:
        groups = re.compile(value).groups
    except re.error as error:
        raise ValueError(f"{value!r} is not a regular expression: {error}") from None
    if groups != 1:
        raise ValueError(
            f"{value!r} needs exactly one group around the number, like 'loss=([0-9.]+)'"
        )
    return value


def _log_pattern(value: str) -> str:
    try:
        re.compile(value)
    except re.error as error:
        raise ValueError(f"{value!r} is not a regular expression: {error}") from None
    return value


_BOUND = re.compile(r"^\s*(<=|>=|==|<|>)\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*$")


def parse_bound(text: str) -> tuple[str, float]:
    """``'< 2.0'`` -> ``('<', 2.0)``; a ``ValueError`` saying the form otherwise."""
    match = _BOUND.match(text)
    if not match:
        raise ValueError(f"{text!r} is not a bound: write one of <, <=, >, >=, == and a number")
    return match.group(1), float(match.group(2))


def _bound(value: str) -> str:
    parse_bound(value)
    return value


MetricPattern = Annotated[
    str,
    AfterValidator(_metric_pattern),
    Field(description="A regex over each log line with one group capturing the number."),
]
LogPattern = Annotated[str, AfterValidator(_log_pattern)]
Bound = Annotated[
    str,
    AfterValidator(_bound),
    Field(
        pattern=r"^\s*(<=|>=|==|<|>)\s*\S+\s*$",
        description="A bound on the metric's last value on every node, e.g. '< 2.0'.",
    ),
]


class Expect(SpecModel):
    """Checks applied after every stage; a stage passes only when all of them hold."""

    outputs: tuple[str, ...] = Field(
        (),
        description="Files that must exist in the outputs: 'model.pth' (in any output) or "
        "'train_url/model.pth'.",
    )
    log_contains: tuple[LogPattern, ...] = Field(
        (), description="Regexes that must match some log line."
    )
    log_excludes: tuple[LogPattern, ...] = Field(
        (), description="Regexes that must match no log line (e.g. 'nan')."
    )
    metrics: dict[str, Bound] = Field(
        default_factory=dict,
        description="Bounds on metrics named in `metrics:`, e.g. {loss: '< 2.0'}.",
    )
    resumes: bool = Field(
        False,
        description="The local stage also rehearses a failure: it kills the run half-way, "
        "restarts it with only the checkpoint output kept (fault_tolerance.checkpoints) and "
        "passes only if the restart resumed and ended with the uninterrupted run's metrics.",
    )
    perf: PerfExpect | None = Field(
        None,
        description="Bounds on the step of each stage it names, which is then profiled (as "
        "with --perf), e.g. {data_wait: '< 30%', step_p50: '< 120 ms', stages: [local]}.",
    )
    precision: PrecisionGate | None = Field(
        None,
        description="The stage must train like an earlier one: its metric curve against that "
        "stage's recorded run of the same code, e.g. {like: local, loss_rtol: 0.05, steps: 50}.",
    )

    def merged(self, override: Expect) -> Expect:
        """These checks with the keys ``override`` sets replacing them (a stage's ``expect:``)."""
        return self.model_copy(update={k: getattr(override, k) for k in override.model_fields_set})


NO_EXPECT = Expect.model_validate({})

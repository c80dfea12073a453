"""``expect.perf``: bounds on a profiled stage's step, checked against majob's diagnosis of its
profile (``pipeline/perfstage.py`` applies them; every stage it names is profiled).

Two kinds of bound, each written as an operator and a number:

- a step time, in milliseconds unless a unit says otherwise: ``'< 120'``, ``'< 120 ms'``,
  ``'<= 0.5 s'``;
- a share of the step: ``'< 30%'`` or ``'< 0.3'``.

Every rank of the profile must hold each bound (a slow rank is the one that fails the stage).
"""

from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from majob.spec.fields import SpecModel

_OPERATOR = r"(<=|>=|==|<|>)"
_NUMBER = r"([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)"
_TIME = re.compile(rf"^\s*{_OPERATOR}\s*{_NUMBER}\s*(ms|s)?\s*$")
_SHARE = re.compile(rf"^\s*{_OPERATOR}\s*{_NUMBER}\s*(%)?\s*$")

#: ``expect.perf``'s share keys and the step part (``perf/timeline.py`` PARTS) each bounds.
SHARE_PARTS = {
    "data_wait": "data",
    "forward": "forward",
    "backward": "backward",
    "optimizer": "optimizer",
    "sync": "sync",
    "gc": "gc",
    "dispatch": "dispatch",
    "host_gaps": "host",
}


def parse_time_bound(text: str) -> tuple[str, float]:
    """``'< 0.5 s'`` -> ``('<', 500.0)`` (milliseconds); a ``ValueError`` saying the form."""
    match = _TIME.match(text)
    if not match:
        raise ValueError(
            f"{text!r} is not a step-time bound: write an operator (<, <=, >, >=, ==) and a "
            "number of milliseconds, e.g. '< 120 ms' or '< 0.5 s'"
        )
    scale = 1000.0 if match.group(3) == "s" else 1.0
    return match.group(1), float(match.group(2)) * scale


def parse_share_bound(text: str) -> tuple[str, float]:
    """``'< 30%'`` or ``'< 0.3'`` -> ``('<', 0.3)``; a ``ValueError`` saying the form."""
    match = _SHARE.match(text)
    if not match:
        raise ValueError(
            f"{text!r} is not a share bound: write an operator (<, <=, >, >=, ==) and a "
            "percentage or a fraction of the step, e.g. '< 30%' or '< 0.3'"
        )
    value = float(match.group(2)) / (100.0 if match.group(3) else 1.0)
    if not 0.0 <= value <= 1.0:
        raise ValueError(f"{text!r}: a share of the step is between 0% and 100%")
    return match.group(1), value


def _time_bound(value: str) -> str:
    parse_time_bound(value)
    return value


def _share_bound(value: str) -> str:
    parse_share_bound(value)
    return value


TimeBound = Annotated[
    str,
    AfterValidator(_time_bound),
    Field(description="A bound on a step time: '< 120 ms', '< 0.5 s' (a bare number is ms)."),
]
ShareBound = Annotated[
    str,
    AfterValidator(_share_bound),
    Field(description="A bound on a share of the step: '< 30%' or '< 0.3'."),
]


class PerfExpect(SpecModel):
    """What a profiled stage's step must look like; the stages named are profiled (as with
    ``--perf``) and fail when a bound does not hold on some rank."""

    stages: tuple[Literal["local", "debug", "formal"], ...] = Field(
        ("local", "debug", "formal"),
        min_length=1,
        description="The stages profiled and checked (a CPU step is no bound for an NPU one).",
    )
    step_p50: TimeBound | None = Field(None, description="The median optimizer step's time.")
    step_p95: TimeBound | None = Field(None, description="The 95th percentile step's time.")
    data_wait: ShareBound | None = Field(
        None, description="Share of a step spent waiting for the DataLoader's next batch."
    )
    forward: ShareBound | None = Field(None, description="Share spent in the forward pass.")
    backward: ShareBound | None = Field(None, description="Share spent in the backward pass.")
    optimizer: ShareBound | None = Field(None, description="Share in optimizer step/zero_grad.")
    sync: ShareBound | None = Field(
        None, description="Share stalled in host-device syncs (.item(), synchronize)."
    )
    gc: ShareBound | None = Field(None, description="Share in Python's garbage collector.")
    dispatch: ShareBound | None = Field(
        None, description="Share in the host issuing operators (short gaps between them)."
    )
    host_gaps: ShareBound | None = Field(
        None, description="Share in Python code that runs no operator (long gaps)."
    )
    findings: ShareBound | None = Field(
        None,
        description="The largest finding's saving, as a share of the step: '< 5%' passes a "
        "stage only when majob finds nothing worth 5% of a step.",
    )

    def applies_to(self, stage: str) -> bool:
        return stage in self.stages

"""``expect.precision``: a stage must train like an earlier one (issue 39, the gate).

``{like: local, loss_rtol: 0.05, steps: 50}`` on the debug stage compares the debug run's
``loss`` series with the local stage's recorded run of the same code (``pipeline/likegate.py``
applies it); a failure stops the pipeline before the next stage. Here: the model and the rules
that need the whole spec (which stage is earlier, which metric exists).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from pydantic import Field

from majob.spec.fields import SpecModel
from majob.spec.positions import Loc

Problem = tuple[Loc, str]
STAGE_ORDER = ("local", "debug", "formal")


class PrecisionGate(SpecModel):
    """The stage's metric curve must follow an earlier stage's recorded run of the same code."""

    like: Literal["local", "debug"] = Field(
        description="The earlier stage whose recorded run (same code digest) is the reference."
    )
    loss_rtol: float = Field(
        0.05,
        gt=0,
        description="Largest relative difference allowed at any compared point: "
        "|this - reference| / |reference|.",
    )
    steps: int | None = Field(
        None,
        ge=1,
        description="Compare the first N values each run logged (default: all both have).",
    )
    metric: str = Field("loss", description="The metric of `metrics:` whose curves are compared.")


def applies(gate: PrecisionGate | None, stage: str) -> bool:
    """Whether ``gate`` checks ``stage``: only a stage after the one it names."""
    return gate is not None and STAGE_ORDER.index(stage) > STAGE_ORDER.index(gate.like)


def gate_problems(
    gate: PrecisionGate | None,
    where: Loc,
    metrics: Mapping[str, str],
    stage: str | None = None,
) -> list[Problem]:
    """What is wrong with ``gate`` written at ``where`` (on ``stage``'s override, or for every
    stage when ``stage`` is None)."""
    if gate is None:
        return []
    problems: list[Problem] = []
    if gate.metric not in metrics:
        known = ", ".join(sorted(metrics)) or "none"
        problems.append(
            (
                (*where, "metric"),
                f"no metric named {gate.metric!r} in `metrics:` (defined: {known}); "
                f"add one, e.g. {gate.metric}: '{gate.metric}=([0-9.eE+-]+)'",
            )
        )
    if stage is not None and not applies(gate, stage):
        earlier = STAGE_ORDER[: STAGE_ORDER.index(stage)]
        fix = f"name one of: {', '.join(earlier)}" if earlier else "move it to a later stage"
        problems.append(
            ((*where, "like"), f"the {stage} stage cannot train like {gate.like}: {fix}")
        )
    return problems


def stage_gate_problems(stage: str, expect: object, metrics: Mapping[str, str]) -> list[Problem]:
    """``gate_problems`` of ``stages.<stage>.expect.precision`` (``expect``: that ``Expect``)."""
    gate = getattr(expect, "precision", None)
    return gate_problems(gate, ("stages", stage, "expect", "precision"), metrics, stage)


__all__ = ["STAGE_ORDER", "PrecisionGate", "applies", "gate_problems", "stage_gate_problems"]

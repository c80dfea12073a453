"""The spec's ``precision:`` block: what ``--dump`` records (``majob run|submit --dump``).

msprobe's API dump (``task``, ``level``, ``steps``, ``ranks``, ``scope``), the seed, and, since
issue 39, the gradient monitor (``grad:``, recorded by ``--dump grad`` or when the block has a
``grad:``) and deterministic mode (``deterministic: true``: msprobe's ``seed_all(seed,
mode=True, rm_dropout=True)``, dropout's ``p`` set to 0). Every key is optional.
"""

from __future__ import annotations

import itertools
import math
from typing import Annotated, Literal

from pydantic import Field, field_validator

from majob.spec.fields import SpecModel

# msprobe's grad_probe default bounds (PtGradientMonitor.default_bounds)
DEFAULT_BOUNDS = (-10.0, -1.0, -0.1, -0.01, -0.001, 0.0, 0.001, 0.01, 0.1, 1.0, 10.0)
LayerPattern = Annotated[str, Field(min_length=1, max_length=500, pattern=r"^\S+$")]


class GradProbe(SpecModel):
    """Which gradients ``--dump grad`` records: per step, per parameter, statistics and signs."""

    steps: tuple[Annotated[int, Field(ge=0)], ...] | None = Field(
        None,
        description="Optimizer steps (from 0) whose gradients are recorded "
        "(default: the dump's `steps`).",
    )
    layers: tuple[LayerPattern, ...] = Field(
        (),
        description="Parameter names or patterns (fc1, layer1.*, *.weight; a module name "
        "matches its parameters); empty: every parameter.",
    )
    bounds: tuple[float, ...] = Field(
        DEFAULT_BOUNDS,
        min_length=1,
        max_length=64,
        description="Bucket edges, strictly increasing: the share of each gradient's values in "
        "each bucket is recorded (msprobe's grad_probe distribution).",
    )

    @field_validator("bounds")
    @classmethod
    def _increasing(cls, bounds: tuple[float, ...]) -> tuple[float, ...]:
        if not all(math.isfinite(b) for b in bounds):
            raise ValueError("bounds must be finite numbers")
        for low, high in itertools.pairwise(bounds):
            if not low < high:
                raise ValueError(
                    f"bounds must be strictly increasing ({low:g} is followed by {high:g})"
                )
        return bounds


class Precision(SpecModel):
    """What ``--dump`` records with msprobe (``majob run|submit --dump``, ``majob compare``)."""

    task: Literal["statistics", "tensor"] = Field(
        "statistics", description="statistics (max/min/mean/norm per API) or tensor (full data)."
    )
    level: Literal["L0", "L1", "mix"] = Field(
        "L1", description="L1: every torch API call; L0: module inputs/outputs; mix: both."
    )
    steps: tuple[Annotated[int, Field(ge=0)], ...] = Field(
        (0, 1), description="Training steps (optimizer steps, from 0) to dump."
    )
    ranks: tuple[Annotated[int, Field(ge=0)], ...] = Field(
        (), description="Ranks to dump (empty: every rank)."
    )
    scope: tuple[str, ...] = Field(
        (), description="msprobe scope: only these APIs/modules (empty: all)."
    )
    seed: int = Field(1234, ge=0, description="Seed for every generator (deterministic mode).")
    grad: GradProbe | None = Field(
        None,
        description="Gradient monitoring: per-step, per-parameter statistics and directions "
        "(`--dump grad` records them with these defaults when absent).",
    )
    deterministic: bool = Field(
        False,
        description="Deterministic mode as msprobe's seed_all(mode=True, rm_dropout=True): "
        "dropout p=0 as well (without it --dump still seeds and uses deterministic algorithms).",
    )

    @property
    def grad_steps(self) -> tuple[int, ...]:
        """The steps whose gradients are recorded (``grad.steps``, else the dump's)."""
        if self.grad is None:
            return ()
        return self.steps if self.grad.steps is None else self.grad.steps


__all__ = ["DEFAULT_BOUNDS", "GradProbe", "Precision"]

"""The spec's ``sweep:`` block: the hyperparameters a sweep searches, what it optimises, how many
trials run and how many at once, when a poor trial is stopped early, and at which stage.

::

    sweep:
      space:
        lr: {float: [0.0001, 0.5], log: true}
        batch_size: {choice: [16, 32, 64]}
        epochs: {int: [1, 4]}
      objective: {metric: accuracy, goal: max, at: last}
      trials: 8
      parallel: 2
      prune: median
      stage: debug

``majob sweep`` (``majob/sweep``) reads it; a spec without it is an ordinary job.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Literal, Protocol

from pydantic import Field, field_validator, model_validator

from majob.spec.catalog import catalogue_flavor
from majob.spec.fields import Scalar, SpecModel
from majob.spec.positions import Loc

MAX_TRIALS = 1000
# A name the script can take as --<name>=<value>.
_ARGUMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")
# Named here: inside ``Param`` the field names ``int`` and ``float`` hide the builtins.
IntRange = tuple[int, int]
FloatRange = tuple[float, float]


class Resources(Protocol):
    """What the quota check reads of the sweep stage's ``resources:``."""

    @property
    def flavor(self) -> str | None: ...

    @property
    def nodes(self) -> int: ...


class Param(SpecModel):
    """One searched hyperparameter: a ``choice`` of values, or an ``int``/``float`` range
    ``[low, high]`` (both ends included), sampled on a log scale with ``log: true``."""

    choice: tuple[Scalar, ...] | None = Field(None, description="The values to choose from.")
    int: IntRange | None = Field(None, description="[low, high], whole numbers.")
    float: FloatRange | None = Field(None, description="[low, high], real numbers.")
    log: bool = Field(False, description="Sample the range on a log scale (low must be > 0).")

    @model_validator(mode="after")
    def _one_kind(self) -> Param:
        kinds = [k for k in ("choice", "int", "float") if getattr(self, k) is not None]
        if len(kinds) != 1:
            raise ValueError(
                "give exactly one of choice: [...], int: [low, high] or float: [low, high]"
                + (f" (found {' and '.join(kinds)})" if kinds else "")
            )
        if self.choice is not None:
            if not self.choice:
                raise ValueError("choice: needs at least one value")
            if self.log:
                raise ValueError("log: true is for int and float ranges, not choice")
        bounds = self.int if self.int is not None else self.float
        if bounds is not None:
            low, high = bounds
            if not low < high:
                raise ValueError(f"the range [{low}, {high}] is empty: low must be below high")
            if self.log and low <= 0:
                raise ValueError(f"log: true needs low > 0 (got {low})")
        return self


class Objective(SpecModel):
    """What the sweep optimises: a metric of ``metrics:``, its goal, and which value counts."""

    metric: str = Field(description="A metric defined under metrics: (read from the log).")
    goal: Literal["min", "max"] = Field(description="min (e.g. loss) or max (e.g. accuracy).")
    at: Literal["last", "best"] = Field(
        "last", description="The metric's last value in the trial's log, or its best."
    )


class Sweep(SpecModel):
    """Many trials of this spec, each with other hyperparameters (``majob sweep``)."""

    space: dict[str, Param] = Field(description="The searched hyperparameters, by name.")
    objective: Objective
    trials: int = Field(8, ge=1, le=MAX_TRIALS, description="How many trials to run in all.")
    parallel: int = Field(1, ge=1, le=64, description="How many trials run at once.")
    prune: Literal["none", "median"] = Field(
        "none",
        description="median: stop a trial whose objective so far is worse than the median of "
        "the trials before it at the same step.",
    )
    prune_after: int = Field(
        1, ge=0, description="Steps a trial reports before it may be pruned (warm-up)."
    )
    prune_startup: int = Field(
        2, ge=0, description="Trials that finish before pruning starts (the median needs them)."
    )
    stage: Literal["debug", "formal"] = Field(
        "debug", description="The stage every trial runs at (its overrides apply)."
    )
    seed: int | None = Field(None, ge=0, description="The sampler's seed (repeatable sweeps).")

    @field_validator("space")
    @classmethod
    def _searches_something(cls, space: dict[str, Param]) -> dict[str, Param]:
        if not space:
            raise ValueError(
                "no hyperparameter to search: name one, e.g. lr: {float: [0.0001, 0.1], log: true}"
            )
        return space


def sweep_problems(
    sweep: Sweep | None,
    metrics: Mapping[str, str],
    channels: list[str],
    resources: Resources,
) -> list[tuple[Loc, str]]:
    """What the rest of the spec says against ``sweep``: the objective's metric is defined, no
    searched name is an input/output, the parallel trials fit the flavor."""
    if sweep is None:
        return []
    problems: list[tuple[Loc, str]] = []
    metric = sweep.objective.metric
    if metric not in metrics:
        defined = ", ".join(metrics) or "none"
        problems.append(
            (
                ("sweep", "objective", "metric"),
                f"{metric!r} is not a metric (defined: {defined}); define it under metrics: "
                f"(e.g. {metric}: '{metric}=([0-9.]+)') so the trials' logs report it",
            )
        )
    for name in sweep.space:
        if name in channels:
            problems.append(
                (("sweep", "space", name), f"{name!r} is an input/output name, not a parameter")
            )
        elif not _ARGUMENT.match(name):
            problems.append((("sweep", "space", name), f"{name!r} cannot be a --{name} argument"))
    problems += _quota_problems(sweep.parallel, resources.flavor, resources.nodes)
    return problems


def _quota_problems(parallel: int, flavor: str | None, nodes: int) -> list[tuple[Loc, str]]:
    # ModelArts publishes one number per flavor, max_num: the nodes it offers. majob reads it as
    # the sweep's node budget, so K parallel trials of N nodes must fit: K * N <= max_num. A
    # flavor the catalogue does not list is checked by the service when the trial is created.
    known = catalogue_flavor(flavor)
    if known is None or parallel * nodes <= known.max_num:
        return []
    fits = max(known.max_num // nodes, 1)
    return [
        (
            ("sweep", "parallel"),
            f"{parallel} parallel trials of {nodes} node(s) need {parallel * nodes} nodes of "
            f"{flavor}, whose quota is {known.max_num}: set sweep.parallel to at most {fits}",
        )
    ]

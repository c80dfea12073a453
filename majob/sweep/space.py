"""From a ``sweep:`` block to one trial: the values Optuna suggests, the trial's spec (named
``<name>-t<k>``, tagged with the sweep), and its objective read from the metric series.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from majob.compile.common import STAGE_SUFFIX
from majob.pipeline.metrics import Series, node_order
from majob.spec.fields import Scalar
from majob.spec.models import STAGES, JobSpec, Stage, StageOverride
from majob.spec.sweep import Objective, Param

if TYPE_CHECKING:
    import optuna

# The annotation that tags a trial's job with its sweep (ModelArts keeps metadata.annotations).
SWEEP_ANNOTATION = "majob/sweep"


def suggest(trial: optuna.Trial, space: Mapping[str, Param]) -> dict[str, Scalar]:
    """One value per searched hyperparameter, drawn by the study's sampler."""
    values: dict[str, Scalar] = {}
    for name, param in space.items():
        if param.choice is not None:
            chosen = trial.suggest_categorical(name, list(param.choice))
            assert chosen is not None  # a choice of the spec's values, which are never null
            values[name] = chosen
        elif param.int is not None:
            values[name] = trial.suggest_int(name, *param.int, log=param.log)
        elif param.float is not None:
            values[name] = trial.suggest_float(name, *param.float, log=param.log)
    return values


def trial_name(name: str, number: int) -> str:
    """``<name>-t<k>``, k counting from 1, cut to leave room for the stage's suffix (a debug
    trial's job is ``<name>-t<k>-debug``, as every debug job is ``<name>-debug``)."""
    suffix = f"-t{number + 1}"
    return name[: 64 - len(suffix) - len(STAGE_SUFFIX["debug"])] + suffix


def job_name(name: str, number: int, stage: Stage) -> str:
    """The job name trial ``number`` gets at ``stage``."""
    return trial_name(name, number) + STAGE_SUFFIX[stage]


def trial_spec(spec: JobSpec, stage: Stage, number: int, values: Mapping[str, Scalar]) -> JobSpec:
    """``spec`` as trial ``number`` runs it: its name, the trial's values (over the stage's own
    overrides too, which would otherwise win), and no ``sweep:`` (a trial is one job). Each
    output gets a folder of the trial's own (``<output>/<name>-t<k>/``, and the stage's folder
    under it: ``<output>/<name>-t<k>/<stage>/``; a folder a stage names exactly gets the trial's
    below it): trials running at once would otherwise overwrite each other's files, and a
    predownloaded checkpoint folder (``fault_tolerance.checkpoints``) would hand one trial
    another's checkpoint to resume."""
    name = trial_name(spec.name, number)
    update: dict[str, object] = {
        "name": name,
        "hyperparameters": {**spec.hyperparameters, **values},
        "sweep": None,
        "outputs": tuple(
            output.model_copy(update={"obs": output.obs.join(f"{name}/")})
            for output in spec.outputs
        ),
    }
    staged: dict[str, StageOverride] = {}
    for each in STAGES:
        override = spec.stages.get(each)
        if override is None:
            continue
        changed: dict[str, object] = {
            "outputs": {k: folder.join(f"{name}/") for k, folder in override.outputs.items()}
        }
        if each == stage:
            changed["hyperparameters"] = {**override.hyperparameters, **values}
        staged[each] = override.model_copy(update=changed)
    update["stages"] = spec.stages.model_copy(update=staged)
    return spec.model_copy(update=update).with_from_environ(spec.from_environ)


def objective_series(series: Series, metric: str) -> list[float]:
    """The objective metric's values on the first node that reported it (worker-0 first)."""
    for node in sorted(series, key=node_order):
        values = series[node].get(metric)
        if values:
            return values
    return []


def objective_value(values: list[float], objective: Objective) -> float | None:
    """The value that counts (``at: last`` or ``best``), None when the metric never came."""
    if not values:
        return None
    if objective.at == "last":
        return values[-1]
    return min(values) if objective.goal == "min" else max(values)


def shown(values: Mapping[str, object]) -> str:
    """``lr=0.01 batch_size=32``, floats kept short."""
    return " ".join(
        f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}" for k, v in values.items()
    )

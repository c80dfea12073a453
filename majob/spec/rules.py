"""The spec's rules that span fields, and the facts they read from a flavor id.

Each rule returns problems as ``(field path, message)``; ``JobSpec`` checks them once per stage
(the stage's overrides applied) and raises them together as ``SpecRuleErrors``, which the loader
turns into ``file:line:col`` lines at the field each names.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence

from majob.spec.fields import Scalar, render_scalar
from majob.spec.perf_expect import PerfExpect
from majob.spec.positions import Loc

Problem = tuple[Loc, str]  # a field path and what is wrong there

ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_ENV_VARS = 100
MAX_ENV_KEY = 8192
MAX_ENV_VALUE = 4096


def checkpoint_problems(output: str | None, outputs: Sequence[str]) -> list[Problem]:
    """``fault_tolerance.checkpoints`` must sit under one of the outputs."""
    if output is None or output in outputs:
        return []
    known = ", ".join(outputs) or "none: add one under outputs"
    return [
        (
            ("fault_tolerance", "checkpoints"),
            f"{output!r} is not an output (outputs: {known}); checkpoints go under an "
            "output, e.g. train_url/ckpt/",
        )
    ]


class SpecRuleErrors(ValueError):
    """Cross-field problems, each with the field path it belongs to (the loader locates them)."""

    def __init__(self, problems: list[Problem]) -> None:
        super().__init__("; ".join(message for _, message in problems))
        self.problems = problems


_ASCEND_FLAVOR = re.compile(r"(snt|kat|ascend|npu|d910|910b)", re.IGNORECASE)
_CARDS_IN_FLAVOR = re.compile(r"(?:\.(\d+)$|visual\.(\d*)xlarge)")


def flavor_is_ascend(flavor: str) -> bool:
    """Flavor ids of Ascend nodes carry one of snt/kat/ascend/npu (e.g. modelarts.bm.snt9...)."""
    return bool(_ASCEND_FLAVOR.search(flavor))


def cards_in_flavor(flavor: str) -> int | None:
    """Accelerators per node when the flavor id says: ``...xlarge.8`` or ``pool.visual.4xlarge``."""
    match = _CARDS_IN_FLAVOR.search(flavor)
    if not match:
        return None
    trailing, visual = match.groups()
    if trailing:
        return int(trailing)
    return int(visual) if visual else 1


def env_problems(env: Mapping[str, Scalar], where: Loc) -> list[Problem]:
    """What ModelArts would refuse in ``env`` (the spec's, or a stage's, at ``where``)."""
    problems: list[Problem] = []
    if len(env) > MAX_ENV_VARS:
        problems.append((where, f"ModelArts takes at most {MAX_ENV_VARS} env variables"))
    for name, value in env.items():
        at = (*where, name)
        if not ENV_NAME_PATTERN.match(name) or len(name) > MAX_ENV_KEY:
            problems.append((at, f"{name!r} is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)"))
        elif name.startswith("MA_"):
            problems.append((at, "the MA_ prefix is reserved by ModelArts; rename the variable"))
        text = render_scalar(value)
        if "$" in text:
            problems.append(
                (at, "ModelArts does not expand '$' references in env values; write the value")
            )
        if len(text) > MAX_ENV_VALUE:
            problems.append((at, f"value is longer than {MAX_ENV_VALUE} characters"))
    return problems


def override_problems(
    stage: str,
    env: Mapping[str, Scalar],
    hyperparameters: Sequence[str],
    channel_names: Sequence[str],
) -> list[Problem]:
    """What is wrong with ``stages.<stage>``'s env and hyperparameter names."""
    problems = env_problems(env, ("stages", stage, "env"))
    for name in hyperparameters:
        if name in channel_names:
            problems.append(
                (
                    ("stages", stage, "hyperparameters", name),
                    f"{name!r} is an input/output name; rename the hyperparameter",
                )
            )
    return problems


def channel_problems(
    channels: Sequence[tuple[str, Sequence[str]]], hyperparameters: Mapping[str, Scalar]
) -> list[Problem]:
    """Channel names (``channels``: each kind, inputs or outputs, with its names in order) are
    unique and no hyperparameter has one: the script would get two ``--<name>`` arguments."""
    problems: list[Problem] = []
    seen: set[str] = set()
    for kind, names in channels:
        for index, name in enumerate(names):
            if name in seen:
                problems.append(
                    (
                        (kind, index, "name"),
                        f"channel name {name!r} is used twice; names must be unique",
                    )
                )
            seen.add(name)
            if name in hyperparameters:
                problems.append(
                    (
                        ("hyperparameters", name),
                        f"{name!r} is also an input/output name; the script "
                        "would get two --" + name + " arguments",
                    )
                )
    return problems


def distributed_problems(
    backend: str | None,
    *,
    ascend: bool,
    nodes: int,
    cards: int | None,
    hyperparameters: Mapping[str, Scalar],
    where: Loc,
) -> list[Problem]:
    """The rules of one stage's effective spec (``backend`` None: not distributed): the backend
    fits the accelerator, and a one-node multi-card DDP job names its world size and rank (at
    ``where``)."""
    problems: list[Problem] = []
    if backend == "hccl" and not ascend:
        problems.append(
            (
                ("distributed", "backend"),
                "hccl needs Ascend: use image.engine Ascend-Powered-Engine or an Ascend "
                "flavor (snt9...), or pick nccl/gloo",
            )
        )
    if backend == "nccl" and ascend:
        problems.append(
            (("distributed", "backend"), "nccl does not run on Ascend NPUs: use backend hccl")
        )
    if backend is not None and nodes == 1 and cards is not None and cards > 1:
        missing = [h for h in ("world_size", "rank") if h not in hyperparameters]
        if missing:
            problems.append(
                (
                    where,
                    "a single-node multi-card DDP job gets no --world_size/--rank from "
                    f"ModelArts: add hyperparameters {' and '.join(missing)}",
                )
            )
    return problems


def metric_problems(metrics: Mapping[str, str], expected: Mapping[str, str]) -> list[Problem]:
    """Every metric ``expect:`` bounds is defined under ``metrics:``."""
    return [
        (
            ("expect", "metrics", name),
            f"{name!r} is not a metric: define it under metrics: (e.g. {name}: '{name}=([0-9.]+)')",
        )
        for name in expected
        if name not in metrics
    ]


def perf_expect_problems(
    perf: PerfExpect | None, outputs: Sequence[str], custom_command: bool
) -> list[Problem]:
    """``expect.perf`` profiles its stages: the profile needs an output to go to, and a cloud
    stage of a custom image (whose command starts the job, no boot file to wrap) cannot be."""
    if perf is None:
        return []
    problems: list[Problem] = []
    if not outputs:
        problems.append(
            (
                ("expect", "perf"),
                "a profile is written into the first output, and the spec has none: add an "
                "`outputs:` entry (e.g. train_url)",
            )
        )
    cloud = [stage for stage in perf.stages if stage != "local"]
    if custom_command and cloud:
        problems.append(
            (
                ("expect", "perf", "stages"),
                f"{' and '.join(cloud)} run a custom image's command, which majob cannot "
                "profile (no boot file to wrap): set expect.perf.stages: [local]",
            )
        )
    return problems

"""The job spec: what to run, on which image and flavor, with which OBS data, per stage.

Models are frozen and reject unknown keys. Rules that span fields are checked once per stage
(the stage's overrides applied) so a problem is reported where it was written, e.g.
``stages.debug.nodes``. ``JobSpec.at_stage(stage)`` gives the effective spec of a stage.
"""

from __future__ import annotations

import os.path
import re
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    PlainSerializer,
    PrivateAttr,
    StrictBool,
    StrictFloat,
    StrictInt,
    StrictStr,
    WithJsonSchema,
    field_validator,
    model_validator,
)

from majob.spec.durations import parse_duration
from majob.spec.envrefs import FromEnviron
from majob.storage.uri import ObsUri

Stage = Literal["local", "debug", "formal"]
STAGES: tuple[Stage, ...] = ("local", "debug", "formal")

# A hyperparameter or env value keeps its YAML type (a bool stays a bool) until it is rendered.
Scalar = StrictBool | StrictInt | StrictFloat | StrictStr

NAME_PATTERN = r"^[A-Za-z0-9_-]{1,64}$"
CHANNEL_PATTERN = r"^[A-Za-z_][A-Za-z0-9_]{0,63}$"
ENV_NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
MAX_ENV_VARS = 100
MAX_ENV_KEY = 8192
MAX_ENV_VALUE = 4096


def render_scalar(value: Scalar) -> str:
    """The string ModelArts receives: ``true``/``false`` for bools, ``repr`` for floats."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value)
    return str(value)


def _parse_obs(value: object) -> ObsUri:
    if isinstance(value, ObsUri):
        return value
    if not isinstance(value, str):
        raise ValueError(f"an OBS path must be a string like obs://bucket/dir/, not {value!r}")
    return ObsUri.parse(value)


def _parse_obs_dir(value: object) -> ObsUri:
    uri = _parse_obs(value)
    if not uri.is_dir:
        raise ValueError(f"{uri} must be a directory: end it with '/' ({uri.as_dir()})")
    return uri


_OBS_SCHEMA = {"type": "string", "pattern": r"^(obs://|/)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?$"}
_OBS_DIR_SCHEMA = {
    "type": "string",
    "pattern": r"^(obs://|/)[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](/.*)?/$",
}

ObsPath = Annotated[
    ObsUri,
    BeforeValidator(_parse_obs),
    PlainSerializer(lambda u: u.uri, return_type=str),
    WithJsonSchema({**_OBS_SCHEMA, "description": "obs://bucket/path (file or dir/)"}),
]
ObsDir = Annotated[
    ObsUri,
    BeforeValidator(_parse_obs_dir),
    PlainSerializer(lambda u: u.uri, return_type=str),
    WithJsonSchema({**_OBS_DIR_SCHEMA, "description": "obs://bucket/dir/ (ends with '/')"}),
]
Duration = Annotated[
    int,
    BeforeValidator(parse_duration),
    WithJsonSchema(
        {
            "anyOf": [
                {"type": "integer", "minimum": 1},
                {"type": "string", "pattern": r"^(\d+[smhd])+$"},
            ],
            "description": "seconds, or e.g. '90s', '10m', '1h30m', '2d'",
        }
    ),
]


class SpecModel(BaseModel):
    """Base of every spec model: frozen, strict about unknown keys."""

    model_config = ConfigDict(frozen=True, extra="forbid", validate_default=False)


class Code(SpecModel):
    """The training code: a local directory, its boot file, where it goes on OBS."""

    dir: str = Field(".", description="Local code directory, relative to the spec file.")
    boot_file: str = Field(description="Boot script, relative to code.dir (e.g. train.py).")
    obs: ObsDir | None = Field(
        None,
        description="OBS directory the code is synced to; its last segment is the code "
        "directory's name in the container (${MA_JOB_DIR}/<name>).",
    )
    ignore: tuple[str, ...] = Field(
        (), description="Extra gitignore-style patterns left out of the upload and local copy."
    )

    @field_validator("boot_file")
    @classmethod
    def _relative_boot_file(cls, value: str) -> str:
        if not value or value.startswith("/") or ".." in value.split("/"):
            raise ValueError(f"{value!r} must be a path inside code.dir, like 'train.py'")
        return value


class Image(SpecModel):
    """A preset engine (``engine`` + ``version``) or a custom SWR image (``swr`` + ``command``)."""

    engine: str | None = Field(None, description="Preset engine name, e.g. PyTorch.")
    version: str | None = Field(
        None,
        description="Preset engine version id, e.g. "
        "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64.",
    )
    swr: str | None = Field(
        None, description="Custom image in SWR, e.g. swr.cn-north-4.myhuaweicloud.com/org/img:tag."
    )
    command: str | None = Field(
        None,
        description="Boot command of a custom image (one line; ${VAR} is expanded in the "
        "container, e.g. python ${MA_JOB_DIR}/code/train.py).",
    )
    uid: int | None = Field(None, ge=0, le=65535, description="User id a custom image runs as.")

    @model_validator(mode="after")
    def _one_kind(self) -> Image:
        if (self.engine is None) != (self.version is None):
            missing = "version" if self.version is None else "engine"
            raise ValueError(f"image.engine and image.version go together: add image.{missing}")
        if self.engine is None and self.swr is None:
            raise ValueError(
                "image needs a preset engine (engine + version) or a custom image (swr + command)"
            )
        if self.swr is not None and self.engine is None and not self.command:
            raise ValueError("a custom image needs image.command, e.g. 'python ${MA_JOB_DIR}/...'")
        if self.command is not None and self.swr is None:
            raise ValueError("image.command is only for custom images (image.swr); remove it")
        if self.command is not None and "\n" in self.command:
            raise ValueError("image.command must be one line: join commands with '&&' or ';'")
        if self.uid is not None and self.swr is None:
            raise ValueError("image.uid is only for custom images (image.swr); remove it")
        return self

    @property
    def is_custom(self) -> bool:
        return self.swr is not None


class Resources(SpecModel):
    """Where the job runs."""

    flavor: str = Field(description="Resource flavor id, e.g. modelarts.vm.cpu.8u.")
    nodes: int = Field(1, ge=1, le=512, description="Number of nodes (one container each).")
    pool: str | None = Field(None, description="Dedicated resource pool id.")
    cards: int | None = Field(
        None,
        ge=1,
        le=16,
        description="Accelerators per node, when the flavor id does not say (MA_NUM_GPUS).",
    )


class Channel(SpecModel):
    """One input or output: an OBS location and its local stand-in."""

    name: str = Field(
        pattern=CHANNEL_PATTERN, description="Argument name, e.g. data_url or train_url."
    )
    obs: ObsPath = Field(description="OBS location.")
    local: str | None = Field(None, description="Local stand-in for the local stage.")
    description: str = Field("", max_length=256)
    access_method: Literal["parameter", "env"] = Field(
        "parameter", description="Reach the script as --<name>=<dir> (parameter) or an env var."
    )


class Input(Channel):
    """Data the job reads; downloaded to /home/ma-user/modelarts/inputs/<name>_0/."""


class Output(Channel):
    """A directory the job writes; uploaded from /home/ma-user/modelarts/outputs/<name>_0/."""

    obs: ObsDir = Field(description="OBS directory (ends with '/').")


class Distributed(SpecModel):
    """How the nodes talk: gloo (CPU), nccl (GPU) or hccl (Ascend NPU)."""

    backend: Literal["nccl", "hccl", "gloo"] = "nccl"


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


class StageOverride(SpecModel):
    """What one stage changes."""

    nodes: int | None = Field(None, ge=1, le=512)
    flavor: str | None = None
    hyperparameters: dict[str, Scalar] = Field(default_factory=dict)
    env: dict[str, Scalar] = Field(default_factory=dict)
    timeout: Duration | None = Field(None, description="Stop the stage after this long.")


class Stages(SpecModel):
    """Per-stage overrides: local (this machine), debug (a short cloud job), formal."""

    local: StageOverride | None = None
    debug: StageOverride | None = None
    formal: StageOverride | None = None

    def get(self, stage: Stage) -> StageOverride | None:
        override: StageOverride | None = getattr(self, stage)
        return override


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


NO_EXPECT = Expect.model_validate({})


class SpecRuleErrors(ValueError):
    """Cross-field problems, each with the field path it belongs to (the loader locates them)."""

    def __init__(self, problems: list[tuple[tuple[str | int, ...], str]]) -> None:
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


class JobSpec(SpecModel):
    """One training job, as written in a majob YAML file."""

    name: str = Field(pattern=NAME_PATTERN, description="Job name: 1-64 of A-Z a-z 0-9 _ -.")
    description: str = Field("", max_length=256)
    code: Code
    image: Image
    resources: Resources
    inputs: tuple[Input, ...] = ()
    outputs: tuple[Output, ...] = ()
    hyperparameters: dict[str, Scalar] = Field(
        default_factory=dict, description="Passed as --<name>=<value>; types are kept."
    )
    env: dict[str, Scalar] = Field(
        default_factory=dict, description="Environment variables (<=100, no MA_ prefix, no $)."
    )
    log: ObsDir | None = Field(None, description="OBS directory the logs are exported to.")
    distributed: Distributed | None = None
    precision: Precision | None = Field(
        None, description="What `--dump` records with msprobe (default: statistics, L1, steps 0-1)."
    )
    stages: Stages = Field(default_factory=Stages)
    auto_stop: Duration | None = Field(
        None, description="Stop the cloud job after this long (rounded up to whole hours)."
    )
    metrics: dict[str, MetricPattern] = Field(
        default_factory=dict,
        description="Metrics read from the log, as name: regex with one group, e.g. "
        "loss: 'loss=([0-9.]+)'. The pipeline records each node's series.",
    )
    expect: Expect = Field(NO_EXPECT, description="Checks every stage must pass (pipeline).")

    # Set by the loader: the hyperparameters and env values a ${VAR} filled in, which majob
    # masks wherever it writes (spec/envrefs.py). Not a field: not in the digest or the schema.
    _from_environ: FromEnviron = PrivateAttr(default_factory=FromEnviron)

    @property
    def from_environ(self) -> FromEnviron:
        return self._from_environ

    def with_from_environ(self, origin: FromEnviron) -> JobSpec:
        """This spec, remembering ``origin`` (copies made from it keep it)."""
        copy = self.model_copy()
        copy._from_environ = origin
        return copy

    def as_written(self) -> JobSpec:
        """This spec with each hyperparameter and env value a ``${VAR}`` filled in written back
        as the reference (``${TOKEN}``, ``Bearer ${TOKEN}``), in the stages' overrides too:
        what majob stores and digests, so no value reaches the ledger and a rotated token
        changes no digest. Not for running: the references are not valid values."""
        references = self._from_environ.references
        if not references:
            return self
        base: dict[str, dict[str, Scalar]] = {
            "hyperparameters": dict(self.hyperparameters),
            "env": dict(self.env),
        }
        staged: dict[str, dict[str, dict[str, Scalar]]] = {}
        for loc, text in references:
            if len(loc) == 2:
                base[str(loc[0])][str(loc[1])] = text
                continue
            for stage in STAGES:
                override = self.stages.get(stage)
                if loc[1] == stage and override is not None:
                    parts = staged.setdefault(
                        stage,
                        {
                            "hyperparameters": dict(override.hyperparameters),
                            "env": dict(override.env),
                        },
                    )
                    parts[str(loc[2])][str(loc[3])] = text
        stages: dict[str, StageOverride] = {
            stage: override.model_copy(update=staged[stage])
            for stage in STAGES
            if stage in staged and (override := self.stages.get(stage)) is not None
        }
        # model_copy, not validation: a reference is not a valid env value (it holds a '$').
        return self.model_copy(update={**base, "stages": self.stages.model_copy(update=stages)})

    @model_validator(mode="after")
    def _cross_field_rules(self) -> JobSpec:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        problems += self._channel_problems()
        for name in self.expect.metrics:
            if name not in self.metrics:
                problems.append(
                    (
                        ("expect", "metrics", name),
                        f"{name!r} is not a metric: define it under metrics: "
                        f"(e.g. {name}: '{name}=([0-9.]+)')",
                    )
                )
        problems += _env_problems(self.env, ("env",))
        for stage in STAGES:
            override = self.stages.get(stage)
            if override is not None:
                problems += _env_problems(override.env, ("stages", stage, "env"))
                for name in override.hyperparameters:
                    if name in self.channel_names:
                        problems.append(
                            (
                                ("stages", stage, "hyperparameters", name),
                                f"{name!r} is an input/output name; rename the hyperparameter",
                            )
                        )
            problems += self._stage_problems(stage, override)
        if problems:
            # Deduplicate: a rule broken by the base spec is broken for every stage.
            raise SpecRuleErrors(list(dict.fromkeys(problems)))
        return self

    @property
    def channel_names(self) -> list[str]:
        return [c.name for c in (*self.inputs, *self.outputs)]

    def _channel_problems(self) -> list[tuple[tuple[str | int, ...], str]]:
        problems: list[tuple[tuple[str | int, ...], str]] = []
        seen: set[str] = set()
        for kind, channels in (("inputs", self.inputs), ("outputs", self.outputs)):
            for index, channel in enumerate(channels):
                if channel.name in seen:
                    problems.append(
                        (
                            (kind, index, "name"),
                            f"channel name {channel.name!r} is used twice; names must be unique",
                        )
                    )
                seen.add(channel.name)
                if channel.name in self.hyperparameters:
                    problems.append(
                        (
                            ("hyperparameters", channel.name),
                            f"{channel.name!r} is also an input/output name; the script "
                            "would get two --" + channel.name + " arguments",
                        )
                    )
        return problems

    def _stage_problems(
        self, stage: Stage, override: StageOverride | None
    ) -> list[tuple[tuple[str | int, ...], str]]:
        effective = self.at_stage(stage)
        problems: list[tuple[tuple[str | int, ...], str]] = []
        where_nodes: tuple[str | int, ...] = (
            ("stages", stage, "nodes") if override and override.nodes else ("resources", "nodes")
        )
        ascend = effective.is_ascend
        backend = effective.distributed.backend if effective.distributed else None
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
                (
                    ("distributed", "backend"),
                    "nccl does not run on Ascend NPUs: use backend hccl",
                )
            )
        cards = effective.cards_per_node
        if (
            effective.distributed is not None
            and effective.resources.nodes == 1
            and cards is not None
            and cards > 1
        ):
            missing = [h for h in ("world_size", "rank") if h not in effective.hyperparameters]
            if missing:
                problems.append(
                    (
                        where_nodes if override and override.nodes else ("hyperparameters",),
                        "a single-node multi-card DDP job gets no --world_size/--rank from "
                        f"ModelArts: add hyperparameters {' and '.join(missing)}",
                    )
                )
        return problems

    # -- derived views -------------------------------------------------------------------------

    @property
    def is_ascend(self) -> bool:
        """True when the engine or the flavor is Ascend."""
        engine = (self.image.engine or "") + " " + (self.image.version or "")
        return (
            "ascend" in engine.lower()
            or "cann" in engine.lower()
            or flavor_is_ascend(self.resources.flavor)
        )

    @property
    def cards_per_node(self) -> int | None:
        """Accelerators per node from ``resources.cards`` or the flavor id."""
        return self.resources.cards or cards_in_flavor(self.resources.flavor)

    def at_stage(self, stage: Stage) -> JobSpec:
        """The spec as ``stage`` runs it: its overrides applied, ``stages`` kept as written."""
        override = self.stages.get(stage)
        if override is None:
            return self
        resources = self.resources.model_copy(
            update={
                k: v
                for k, v in (("nodes", override.nodes), ("flavor", override.flavor))
                if v is not None
            }
        )
        merged = self.model_copy(
            update={
                "resources": resources,
                "hyperparameters": {**self.hyperparameters, **override.hyperparameters},
                "env": {**self.env, **override.env},
            }
        )
        overridden = [("hyperparameters", name) for name in override.hyperparameters]
        overridden += [("env", name) for name in override.env]
        return merged.with_from_environ(self._from_environ.at_stage(stage, overridden))

    def timeout(self, stage: Stage) -> int | None:
        """The stage's timeout in seconds, if any."""
        override = self.stages.get(stage)
        return override.timeout if override else None

    def code_dir_name(self) -> str:
        """The code directory's name in the container: the last segment of code.obs, else of
        code.dir (both name ``${MA_JOB_DIR}/<name>``)."""
        if self.code.obs is not None and self.code.obs.name:
            return self.code.obs.name
        return os.path.basename(os.path.abspath(self.code.dir)) or "code"


def _env_problems(
    env: dict[str, Any], where: tuple[str | int, ...]
) -> list[tuple[tuple[str | int, ...], str]]:
    problems: list[tuple[tuple[str | int, ...], str]] = []
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

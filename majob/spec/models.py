"""The job spec: what to run, on which image and flavor, with which OBS data, per stage.

Models are frozen and reject unknown keys. Rules that span fields (``spec/rules.py``) are
checked once per stage (the stage's overrides applied) so a problem is reported where it was
written, e.g. ``stages.debug.nodes``. ``JobSpec.at_stage(stage)`` gives the effective spec of a
stage. Field types: ``spec/fields.py``; ``expect:``, ``sweep:``: ``spec/expect.py``, ``sweep.py``.
"""

from __future__ import annotations

import os.path
from collections.abc import Mapping
from typing import Literal

from pydantic import Field, PrivateAttr, field_validator, model_validator

from majob.spec.envrefs import FromEnviron
from majob.spec.expect import NO_EXPECT, Expect, MetricPattern
from majob.spec.fault_tolerance import NO_FAULT_TOLERANCE, FaultTolerance
from majob.spec.fields import (
    CHANNEL_PATTERN,
    NAME_PATTERN,
    Duration,
    ObsDir,
    ObsPath,
    Scalar,
    SpecModel,
)
from majob.spec.job_image import Image
from majob.spec.perf import Perf
from majob.spec.precision_gate import gate_problems, stage_gate_problems
from majob.spec.precision_spec import Precision
from majob.spec.rules import (
    Problem,
    SpecRuleErrors,
    cards_in_flavor,
    channel_problems,
    checkpoint_problems,
    distributed_problems,
    env_problems,
    flavor_is_ascend,
    metric_problems,
    override_problems,
    perf_expect_problems,
)
from majob.spec.stage_outputs import room_problems, stage_folders, stage_output_problems
from majob.spec.sweep import Sweep, sweep_problems
from majob.spec.volumes import Volume, volume_problems
from majob.storage.uri import ObsUri

Stage = Literal["local", "debug", "formal"]
STAGES: tuple[Stage, ...] = ("local", "debug", "formal")


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


class Resources(SpecModel):
    """Where the job runs."""

    flavor: str | None = Field(
        None,
        description="Resource flavor id, e.g. modelarts.vm.cpu.8u; required unless pool is a "
        "dedicated CPU pool, which takes none.",
    )
    nodes: int = Field(1, ge=1, le=512, description="Number of nodes (one container each).")
    pool: str | None = Field(None, description="Dedicated resource pool id.")
    cards: int | None = Field(
        None,
        ge=1,
        le=16,
        description="Accelerators per node, when the flavor id does not say (MA_NUM_GPUS).",
    )

    @model_validator(mode="after")
    def _flavor_or_pool(self) -> Resources:
        # Reference modelarts.md §2.3: dedicated CPU pools take no flavor_id; all else needs one.
        if self.flavor is None and self.pool is None:
            raise ValueError(
                "resources.flavor is required (e.g. modelarts.vm.cpu.8u); only a dedicated CPU "
                "pool (resources.pool) takes none"
            )
        return self


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


class StageOverride(SpecModel):
    """What one stage changes."""

    nodes: int | None = Field(None, ge=1, le=512)
    flavor: str | None = None
    hyperparameters: dict[str, Scalar] = Field(default_factory=dict)
    env: dict[str, Scalar] = Field(default_factory=dict)
    timeout: Duration | None = Field(None, description="Stop the stage after this long.")
    outputs: dict[str, ObsDir] = Field(
        default_factory=dict,
        description="An exact OBS folder per output name, for this stage only (debug, formal); "
        "without one the stage writes under <output obs>/<stage>/.",
    )
    perf: Perf | None = Field(None, description="This stage's `perf:` (replaces the spec's).")
    expect: Expect | None = Field(None, description="Its checks: keys set replace `expect:`'s.")


class Stages(SpecModel):
    """Per-stage overrides: local (this machine), debug (a short cloud job), formal."""

    local: StageOverride | None = None
    debug: StageOverride | None = None
    formal: StageOverride | None = None

    def get(self, stage: Stage) -> StageOverride | None:
        override: StageOverride | None = getattr(self, stage)
        return override


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
    volumes: tuple[Volume, ...] = Field((), description="SFS Turbo shares every node mounts.")
    log: ObsDir | None = Field(None, description="OBS directory the logs are exported to.")
    distributed: Distributed | None = None
    precision: Precision | None = Field(
        None, description="What `--dump` records with msprobe (default: statistics, L1, steps 0-1)."
    )
    perf: Perf | None = Field(
        None, description="What `--perf` profiles (default: 3 steps after 2 skipped and 1 warm-up)."
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
    fault_tolerance: FaultTolerance = Field(
        NO_FAULT_TOLERANCE,
        description="Automatic restarts on ModelArts; the checkpoints a restart resumes from.",
    )
    sweep: Sweep | None = Field(None, description="Many trials of this spec (majob sweep).")

    # Set by the loader: the hyperparameters and env values a ${VAR} filled in, which majob
    # masks wherever it writes (spec/envrefs.py). Not a field: not in the digest or the schema.
    _from_environ: FromEnviron = PrivateAttr(default_factory=FromEnviron)
    # Set by ``at_stage`` on the spec it returns: the stage whose folders its outputs are.
    _stage: Stage | None = PrivateAttr(default=None)

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
        folders = [(c.name, c.obs) for c in self.outputs]
        if room_problems(folders):  # every stage's spec below needs its folders
            raise SpecRuleErrors(room_problems(folders))
        named: dict[str, Mapping[str, ObsUri]] = {
            s: o.outputs for s in STAGES if (o := self.stages.get(s)) and o.outputs
        }
        problems = stage_output_problems(folders, named)
        problems += channel_problems(
            (
                ("inputs", [c.name for c in self.inputs]),
                ("outputs", [c.name for c in self.outputs]),
            ),
            self.hyperparameters,
        )
        problems += metric_problems(self.metrics, self.expect.metrics)
        problems += perf_expect_problems(
            self.expect.perf, [c.name for c in self.outputs], bool(self.image.command)
        )
        problems += env_problems(self.env, ("env",)) + volume_problems(
            self.volumes, self.resources.pool
        )
        problems += checkpoint_problems(
            self.fault_tolerance.checkpoint_output, [c.name for c in self.outputs]
        )
        swept = self.at_stage(self.sweep.stage).resources if self.sweep else self.resources
        problems += sweep_problems(self.sweep, self.metrics, self.channel_names, swept)
        problems += gate_problems(self.expect.precision, ("expect", "precision"), self.metrics)
        for stage in STAGES:
            override = self.stages.get(stage)
            if override is not None:
                problems += override_problems(
                    stage, override.env, list(override.hyperparameters), self.channel_names
                )
                problems += stage_gate_problems(stage, override.expect, self.metrics)
            problems += self._stage_problems(stage, override)
        if problems:
            # Deduplicate: a rule broken by the base spec is broken for every stage.
            raise SpecRuleErrors(list(dict.fromkeys(problems)))
        return self

    @property
    def channel_names(self) -> list[str]:
        return [c.name for c in (*self.inputs, *self.outputs)]

    def output_obs(self, stage: Stage, name: str) -> ObsUri:
        """Where output channel ``name`` goes on OBS in ``stage`` (its overrides applied)."""
        return next(o.obs for o in self.at_stage(stage).outputs if o.name == name)

    def _stage_problems(self, stage: Stage, override: StageOverride | None) -> list[Problem]:
        effective = self.at_stage(stage)
        return distributed_problems(
            effective.distributed.backend if effective.distributed else None,
            ascend=effective.is_ascend,
            nodes=effective.resources.nodes,
            cards=effective.cards_per_node,
            hyperparameters=effective.hyperparameters,
            # A missing --world_size/--rank is the stage's doing when the stage set one node.
            where=("stages", stage, "nodes")
            if override and override.nodes
            else ("hyperparameters",),
        )

    # -- derived views -------------------------------------------------------------------------

    @property
    def is_ascend(self) -> bool:
        """True when the engine or the flavor is Ascend."""
        engine = (self.image.engine or "") + " " + (self.image.version or "")
        return (
            "ascend" in engine.lower()
            or "cann" in engine.lower()
            or flavor_is_ascend(self.resources.flavor or "")
        )

    @property
    def cards_per_node(self) -> int | None:
        """Accelerators per node from ``resources.cards`` or the flavor id."""
        return self.resources.cards or cards_in_flavor(self.resources.flavor or "")

    def at_stage(self, stage: Stage) -> JobSpec:
        """The spec as ``stage`` runs it: its overrides applied, each output in the stage's own
        folder (``spec/stage_outputs.py``), ``stages`` kept as written. A stage's spec is its
        own ``at_stage`` (not a folder further down)."""
        if self._stage is not None:
            if self._stage != stage:
                raise ValueError(f"this is the {self._stage} stage's spec, not {stage}'s")
            return self
        override = self.stages.get(stage)
        folders = stage_folders(
            [(o.name, o.obs) for o in self.outputs], stage, override.outputs if override else {}
        )
        update: dict[str, object] = {
            "outputs": tuple(o.model_copy(update={"obs": folders[o.name]}) for o in self.outputs)
        }
        overridden: list[tuple[str, str]] = []
        if override is not None:
            update["resources"] = self.resources.model_copy(
                update={
                    k: v
                    for k, v in (("nodes", override.nodes), ("flavor", override.flavor))
                    if v is not None
                }
            )
            update["hyperparameters"] = {**self.hyperparameters, **override.hyperparameters}
            update["env"] = {**self.env, **override.env}
            if override.perf is not None:
                update["perf"] = override.perf
            if override.expect is not None:
                update["expect"] = self.expect.merged(override.expect)
            overridden += [("hyperparameters", name) for name in override.hyperparameters]
            overridden += [("env", name) for name in override.env]
        staged = self.model_copy(update=update)
        staged._stage = stage
        return staged.with_from_environ(self._from_environ.at_stage(stage, overridden))

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

"""What both compilers decide the same way: the stage's spec, the job name, where the code is,
how long the job may run, where the stage's outputs go, and the rendered hyperparameters and env.

Pure: no I/O, no third-party imports. The SDK and REST compilers only differ in how they spell
these decisions (``obs://bucket/dir/`` against ``/bucket/dir/``, kwargs against a JSON body).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from majob import container
from majob.compile.fault_tolerance import checkpoint_uri
from majob.errors import CompileError
from majob.spec.fields import render_scalar
from majob.spec.models import JobSpec, Stage
from majob.storage.uri import ObsUri

MAX_NAME = 64
#: The job name's suffix per stage. The formal job keeps the spec's name; the debug job is told
#: apart in the job list (and never collides with the formal one); ``local`` names what the
#: local runner emulates.
STAGE_SUFFIX: dict[Stage, str] = {"local": "-local", "debug": "-debug", "formal": ""}


def stage_job_name(name: str, stage: Stage) -> str:
    """The job name ModelArts gets for ``stage``: the suffix kept whole, the name cut to fit 64."""
    suffix = STAGE_SUFFIX[stage]
    return name[: MAX_NAME - len(suffix)] + suffix


@dataclass(frozen=True)
class CodeLocation:
    """The code directory on OBS and the boot file inside it."""

    code_dir: ObsUri
    boot_file: str  # relative to code_dir, as written in the spec

    @property
    def boot_uri(self) -> ObsUri:
        return self.code_dir.join(self.boot_file)

    @property
    def container_dir(self) -> str:
        """Where ModelArts puts the code: ``${MA_JOB_DIR}/<last segment of code_dir>``."""
        return str(container.JOB_DIR / self.code_dir.name)


def code_location(spec: JobSpec) -> CodeLocation:
    """The code's OBS directory; a ``CompileError`` when the spec does not say where it is."""
    if spec.code.obs is None:
        raise CompileError(
            f"job {spec.name!r}: code.obs is not set, so ModelArts would not know where the "
            "training code is",
            hint="set code.obs in the spec (e.g. obs://my-bucket/jobs/"
            f"{spec.name}/code/) or a default bucket in your profile",
        )
    if not spec.code.obs.name:
        raise CompileError(
            f"job {spec.name!r}: code.obs {spec.code.obs} is a bucket root; ModelArts names the "
            "code directory in the container after the last segment of code.obs",
            hint=f"use a directory below the bucket, e.g. {spec.code.obs.join('code/')}",
        )
    if spec.image.engine is not None and not spec.code.boot_file.endswith(".py"):
        raise CompileError(
            f"job {spec.name!r}: code.boot_file {spec.code.boot_file!r} is not a .py file; "
            "preset engines run the boot file with Python",
            hint="point code.boot_file at a Python script, or use a custom image (image.swr) "
            "with image.command",
        )
    return CodeLocation(spec.code.obs, spec.code.boot_file)


def working_dir(spec: JobSpec, code: CodeLocation) -> str | None:
    """The directory the boot file starts in.

    Preset engines: the code directory, so relative paths in the script resolve as they do on
    the laptop (``python train.py`` run from ``code.dir``) and as the local runner runs them.
    Custom images: none; ModelArts requires their boot command to run from ``/home/ma-user``.
    """
    if spec.image.is_custom:
        return None
    return code.container_dir


def auto_stop_hours(spec: JobSpec, stage: Stage) -> int | None:
    """Whole hours after which ModelArts stops the job, or None.

    ModelArts counts ``auto_stop`` in whole hours (``time_unit: HOURS``, ``duration >= 1``).
    The shorter of ``auto_stop`` and the stage's ``timeout`` wins, rounded *up* so the job is
    never stopped before the time the spec grants; a finer stage timeout (e.g. the debug
    stage's ``10m``) is enforced by whoever waits for the job, not by the platform.
    """
    limits = [s for s in (spec.auto_stop, spec.timeout(stage)) if s is not None]
    if not limits:
        return None
    return max(1, math.ceil(min(limits) / 3600))


def stage_folder_notes(spec: JobSpec, stage: Stage) -> list[str]:
    """Where ``stage`` writes each output, one line each (``majob compile`` prints them on
    stderr, ``majob submit --dry-run`` with the plan): the stage's own folder, one the stage
    names, or for the local stage the stand-in."""
    effective = spec.at_stage(stage)
    override = spec.stages.get(stage)
    named = override.outputs if override is not None else {}
    notes = []
    for output in effective.outputs:
        if stage == "local":
            where = f"{output.local} (its local stand-in)" if output.local else "the run directory"
        else:
            how = (
                f"named by stages.{stage}.outputs"
                if output.name in named
                else "the stage's own folder"
            )
            where = f"{output.obs} ({how})"
        notes.append(f"outputs of stage {stage}: {output.name} -> {where}")
    checkpoints = checkpoint_uri(effective)
    if checkpoints is not None and stage != "local":
        notes.append(
            f"checkpoints of stage {stage}: {checkpoints} (downloaded into the container before "
            "the job starts)"
        )
    return notes


def rendered_parameters(spec: JobSpec) -> list[dict[str, str]]:
    """Hyperparameters as ``[{"name", "value"}]`` with string values, in spec order."""
    return [{"name": k, "value": render_scalar(v)} for k, v in spec.hyperparameters.items()]


def rendered_env(spec: JobSpec) -> dict[str, str]:
    """Environment variables with string values, in spec order."""
    return {k: render_scalar(v) for k, v in spec.env.items()}

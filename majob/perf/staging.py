"""``majob submit|pipeline --perf``: the spec and code a profiled cloud job runs.

As for ``--dump`` (``majob/precision/staging.py``): the node has no majob and no run
sitecustomize, so the bootstrap travels with the code. The code dir is copied (with the upload's
ignore and secret rules) into a staging dir, which gets ``majob_perf/{bootstrap.py,profiler.py,
settings.json}``; the staged spec's boot file is that bootstrap, and ``MAJOB_PERF_BOOT`` names
the user's. The profile goes to ``${MA_MOUNT_PATH}/outputs/<first output>_0/profiling``, which
ModelArts uploads to the stage's output folder (``<output obs>/<stage>/profiling/``). The
emulated ModelArts runs it the same way. The user's own code dir is never written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from majob.errors import ConfigError
from majob.perf.setup import BOOTSTRAP, PROFILER, PROFILING_DIR, perf_channel, settings
from majob.spec.models import JobSpec, Stage

STAGED_DIR = "majob_perf"
BOOT_ENV = "MAJOB_PERF_BOOT"


def staging_dir(spec: JobSpec) -> Path:
    """Where ``spec``'s code is staged with the bootstrap (under the project's ``.majob``)."""
    return Path.cwd() / ".majob" / "perf" / "staging" / spec.name


def staged_for_perf(spec: JobSpec, staging: Path, stage: Stage) -> JobSpec:
    """``spec`` with its code copied into ``staging`` and the perf bootstrap as its boot file;
    the profile's settings are ``stage``'s ``perf:``."""
    from majob.runner.tree import copy_code

    if spec.image.command:
        raise ConfigError(
            f"{spec.name}: --perf needs a preset engine (the job runs `python BOOT_FILE`); "
            "a custom image's command starts the job itself",
            hint="profile with torch_npu.profiler in the script itself for a custom image",
        )
    channel = perf_channel(spec)
    if staging.exists():
        shutil.rmtree(staging)
    copy_code(spec, staging)
    tools = staging / STAGED_DIR
    tools.mkdir()
    shutil.copyfile(BOOTSTRAP, tools / "bootstrap.py")
    shutil.copyfile(PROFILER, tools / "profiler.py")
    # The output channel's dir in the container (runner/layout.py: MA_MOUNT_PATH/outputs/<name>_0),
    # expanded on the node: the emulator's MA_MOUNT_PATH is the job's own tree.
    profiling = f"${{MA_MOUNT_PATH}}/outputs/{channel}_0/{PROFILING_DIR}"
    values = settings(spec.at_stage(stage), profiling, None)
    (tools / "settings.json").write_text(json.dumps(values, indent=2) + "\n", encoding="utf-8")
    env = {**spec.env, BOOT_ENV: spec.code.boot_file}
    code = spec.code.model_copy(
        update={"dir": str(staging), "boot_file": f"{STAGED_DIR}/bootstrap.py"}
    )
    return spec.model_copy(update={"code": code, "env": env})


def profile_line(spec: JobSpec, stage: Stage) -> str:
    """Where a profiled job's profile is, once its outputs are uploaded."""
    channel = perf_channel(spec)
    obs = next(o.obs for o in spec.at_stage(stage).outputs if o.name == channel)
    return (
        f"[majob] profile: {obs}{PROFILING_DIR}/ with the {channel} output; "
        f"read it: majob perf {obs}{PROFILING_DIR}/"
    )

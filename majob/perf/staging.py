"""``majob submit|pipeline --perf``: the spec and code a profiled cloud job runs.

As for ``--dump`` (``majob/precision/staging.py``): the node has no majob and no run
sitecustomize, so the bootstrap travels with the code. The code dir is copied (with the upload's
ignore and secret rules) into a staging dir, which gets
``majob_perf/{bootstrap.py,profiler.py,steplog.py,settings.json}``; the staged spec's boot file
is that bootstrap, and ``MAJOB_PERF_BOOT`` names the user's. The profile goes to
``${MA_MOUNT_PATH}/outputs/<first output>_0/profiling``, which ModelArts uploads to the stage's
output folder (``<output obs>/<stage>/profiling/``). The emulated ModelArts runs it the same
way. The user's own code dir is never written.
"""

from __future__ import annotations

from pathlib import Path

from majob.perf.setup import (
    BOOTSTRAP,
    PROFILER,
    PROFILING_DIR,
    STEPLOG,
    perf_channel,
    settings,
)
from majob.runner.staging import container_output, refuse_custom_image, staged_with_bootstrap
from majob.spec.models import JobSpec, Stage

STAGED_DIR = "majob_perf"
BOOT_ENV = "MAJOB_PERF_BOOT"


def staging_dir(spec: JobSpec) -> Path:
    """Where ``spec``'s code is staged with the bootstrap (under the project's ``.majob``)."""
    return Path.cwd() / ".majob" / "perf" / "staging" / spec.name


def staged_for_perf(spec: JobSpec, staging: Path, stage: Stage) -> JobSpec:
    """``spec`` with its code copied into ``staging`` and the perf bootstrap as its boot file;
    the profile's settings are ``stage``'s ``perf:``."""
    refuse_custom_image(
        spec, "--perf", "profile with torch_npu.profiler in the script itself for a custom image"
    )
    profiling = container_output(perf_channel(spec), PROFILING_DIR)
    return staged_with_bootstrap(
        spec,
        staging,
        STAGED_DIR,
        {"bootstrap.py": BOOTSTRAP, "profiler.py": PROFILER, "steplog.py": STEPLOG},
        settings(spec.at_stage(stage), profiling, None),
        {BOOT_ENV: spec.code.boot_file},
    )


def profile_line(spec: JobSpec, stage: Stage) -> str:
    """Where a profiled job's profile is, once its outputs are uploaded."""
    channel = perf_channel(spec)
    obs = spec.output_obs(stage, channel)
    return (
        f"[majob] profile: {obs}{PROFILING_DIR}/ with the {channel} output; "
        f"read it: majob perf {obs}{PROFILING_DIR}/"
    )

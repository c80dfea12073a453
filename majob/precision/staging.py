"""``majob submit --dump``: the spec and code a dumped cloud job runs.

The node has no majob and no run sitecustomize, so the bootstrap travels with the code: the
code dir is copied (with the upload's ignore and secret rules) into a staging dir, which gets
``majob_precision/{bootstrap.py,settings.json}``; the staged spec's boot file is that bootstrap,
and ``MAJOB_PRECISION_BOOT`` names the user's boot file. The emulated ModelArts runs it the same
way (``python <code>/<boot_file>``), so ``--dump`` is checked there before a real job is paid.
The user's own code dir is never written.
"""

from __future__ import annotations

from pathlib import Path

from majob.precision.dumpconfig import (
    BOOTSTRAP,
    DUMP_DIR,
    dump_channel,
    msprobe_config,
    node_settings,
)
from majob.precision.specs import spec_record
from majob.runner.staging import container_output, refuse_custom_image, staged_with_bootstrap
from majob.spec.models import JobSpec, Stage
from majob.spec.precision_spec import Precision
from majob.version import __version__

CONFIG_PACK = BOOTSTRAP.with_name("config_pack.py")
GRAD_PROBE = BOOTSTRAP.with_name("gradprobe.py")

STAGED_DIR = "majob_precision"
BOOT_ENV = "MAJOB_PRECISION_BOOT"


def staged_for_dump(spec: JobSpec, staging: Path, stage: Stage | None = None) -> JobSpec:
    """``spec`` with its code copied into ``staging`` and the bootstrap as its boot file; the
    settings carry the spec as ``stage`` runs it, which the bootstrap writes into the dump."""
    refuse_custom_image(
        spec, "--dump", "add the three msprobe lines by hand (docs/precision.md) for a custom image"
    )
    precision = spec.precision or Precision.model_validate({})
    dump_path = container_output(dump_channel(spec), DUMP_DIR)
    settings = {
        "dump_path": dump_path,
        "seed": precision.seed,
        "step": list(precision.steps),
        "level": precision.level,
        "msprobe": msprobe_config(precision, Path(dump_path)),
        "spec": spec_record(spec.at_stage(stage) if stage else spec),
        "majob_version": __version__,  # for the configuration check (config_pack.py)
        **node_settings(precision),
    }
    env = {BOOT_ENV: spec.code.boot_file, "PYTHONHASHSEED": str(precision.seed)}
    return staged_with_bootstrap(
        spec,
        staging,
        STAGED_DIR,
        {"bootstrap.py": BOOTSTRAP, "config_pack.py": CONFIG_PACK, "gradprobe.py": GRAD_PROBE},
        settings,
        env,
    )

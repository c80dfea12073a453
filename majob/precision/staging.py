"""``majob submit --dump``: the spec and code a dumped cloud job runs.

The node has no majob and no run sitecustomize, so the bootstrap travels with the code: the
code dir is copied (with the upload's ignore and secret rules) into a staging dir, which gets
``majob_precision/{bootstrap.py,settings.json}``; the staged spec's boot file is that bootstrap,
and ``MAJOB_PRECISION_BOOT`` names the user's boot file. The emulated ModelArts runs it the same
way (``python <code>/<boot_file>``), so ``--dump`` is checked there before a real job is paid.
The user's own code dir is never written.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from majob.errors import ConfigError
from majob.precision.dumpconfig import BOOTSTRAP, DUMP_DIR, dump_channel, msprobe_config
from majob.spec.models import JobSpec, Precision

STAGED_DIR = "majob_precision"
BOOT_ENV = "MAJOB_PRECISION_BOOT"


def staged_for_dump(spec: JobSpec, staging: Path) -> JobSpec:
    """``spec`` with its code copied into ``staging`` and the bootstrap as its boot file."""
    from majob.runner.tree import copy_code

    if spec.image.command:
        raise ConfigError(
            f"{spec.name}: --dump needs a preset engine (the job runs `python BOOT_FILE`); "
            "a custom image's command starts the job itself",
            hint="add the three msprobe lines by hand (docs/precision.md) for a custom image",
        )
    channel = dump_channel(spec)
    precision = spec.precision or Precision.model_validate({})
    if staging.exists():
        shutil.rmtree(staging)
    copy_code(spec, staging)
    tools = staging / STAGED_DIR
    tools.mkdir()
    shutil.copyfile(BOOTSTRAP, tools / "bootstrap.py")
    # The output channel's dir in the container (runner/layout.py: MA_MOUNT_PATH/outputs/<name>_0),
    # expanded on the node: the emulator's MA_MOUNT_PATH is the job's own tree.
    dump_path = f"${{MA_MOUNT_PATH}}/outputs/{channel}_0/{DUMP_DIR}"
    settings = {
        "dump_path": dump_path,
        "seed": precision.seed,
        "step": list(precision.steps),
        "level": precision.level,
        "msprobe": msprobe_config(precision, Path(dump_path)),
    }
    (tools / "settings.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    env = {**spec.env, BOOT_ENV: spec.code.boot_file, "PYTHONHASHSEED": str(precision.seed)}
    code = spec.code.model_copy(
        update={"dir": str(staging), "boot_file": f"{STAGED_DIR}/bootstrap.py"}
    )
    return spec.model_copy(update={"code": code, "env": env})

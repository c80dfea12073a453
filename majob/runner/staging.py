"""The code a cloud job runs with a majob bootstrap as its boot file (``--dump``, ``--perf``).

The node has no majob and no run sitecustomize, so the bootstrap travels with the code: the
code dir is copied (with the upload's ignore and secret rules) into a staging dir, which gets a
folder of the bootstrap's files and its ``settings.json``; the staged spec's boot file is that
bootstrap, and an environment variable names the user's boot file. The user's own code dir is
never written.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from majob.errors import ConfigError
from majob.spec.models import JobSpec


def container_output(channel: str, below: str) -> str:
    """``below`` in the output channel's dir in the container (runner/layout.py:
    MA_MOUNT_PATH/outputs/<name>_0), written with its variable: expanded on the node, where the
    emulator's MA_MOUNT_PATH is the job's own tree."""
    return f"${{MA_MOUNT_PATH}}/outputs/{channel}_0/{below}"


def refuse_custom_image(spec: JobSpec, flag: str, hint: str) -> None:
    """A custom image's command starts the job itself: no boot file to replace."""
    if spec.image.command:
        raise ConfigError(
            f"{spec.name}: {flag} needs a preset engine (the job runs `python BOOT_FILE`); "
            "a custom image's command starts the job itself",
            hint=hint,
        )


def staged_with_bootstrap(
    spec: JobSpec,
    staging: Path,
    folder: str,
    files: Mapping[str, Path],
    settings: Mapping[str, Any],
    env: Mapping[str, str],
) -> JobSpec:
    """``spec`` with its code copied into ``staging`` (emptied first) and ``files`` (name ->
    source, ``bootstrap.py`` among them) plus ``settings.json`` in ``staging/folder``, the
    bootstrap as its boot file and ``env`` added to its environment."""
    from majob.runner.tree import copy_code

    if staging.exists():
        shutil.rmtree(staging)
    copy_code(spec, staging)
    tools = staging / folder
    tools.mkdir()
    for name, source in files.items():
        shutil.copyfile(source, tools / name)
    (tools / "settings.json").write_text(json.dumps(settings, indent=2) + "\n", encoding="utf-8")
    code = spec.code.model_copy(update={"dir": str(staging), "boot_file": f"{folder}/bootstrap.py"})
    return spec.model_copy(update={"code": code, "env": {**spec.env, **env}})

"""``majob env pack``: a conda environment as one relocatable archive, via conda-pack.

conda-pack (the ``condapack`` extra) is the only third-party code here and this module is its
only importer. The guide says no extra conda environments inside the container, and the boot
command is not a login shell (no ``conda activate``), so the advice printed with the archive is
how to use it without either: unpack it to local scratch at start and call its
``bin/python`` directly.
"""

from __future__ import annotations

import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

from majob.container import MOUNT
from majob.errors import UserInputError
from majob.sizes import format_size

INSTALL_HINT = "pip install 'majob[condapack]' (conda-pack; conda itself must be on PATH)"
CODE_DIR_ADVISED = 50 * 10**6  # the code directory is advised under 50 MB (modelarts.md §3.2)


@dataclass(frozen=True)
class Packed:
    archive: Path
    size: int
    notes: tuple[str, ...]  # conda-pack's warnings, one line each


def pack_env(
    name: str | None, prefix: Path | None, output: Path | None, *, force: bool = False
) -> Packed:
    """Pack the environment ``name`` (or at ``prefix``; neither: the active one)."""
    if name is not None and prefix is not None:
        raise UserInputError("give --name or --prefix, not both")
    try:
        import conda_pack
    except ImportError:
        raise UserInputError("majob env pack needs conda-pack", hint=INSTALL_HINT) from None
    if prefix is None and shutil.which("conda") is None:
        what = f"environment {name!r}" if name else "the active environment"
        raise UserInputError(
            f"conda is not on PATH, so {what} cannot be found by name",
            hint="pass --prefix /path/to/env (the directory holding conda-meta/)",
        )
    label = name or (prefix.name if prefix else "env")
    target = output or Path(f"{label}.tar.gz")
    if target.exists() and not force:
        raise UserInputError(f"{target} exists", hint="pass --force to replace it, or --output")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            written = conda_pack.pack(
                name=name,
                prefix=str(prefix) if prefix else None,
                output=str(target),
                force=force,
            )
        except conda_pack.CondaPackException as error:
            first = str(error).strip().splitlines()[0]
            raise UserInputError(
                f"conda-pack: {first}", hint="`conda env list` shows the environments"
            ) from None
    notes = tuple(" ".join(str(w.message).split()) for w in caught)
    archive = Path(written)
    return Packed(archive=archive, size=archive.stat().st_size, notes=notes)


def advice(packed: Packed) -> list[str]:
    """The guide's advice for using the archive on ModelArts, beside the result."""
    lines = [
        "The guide: no extra conda environments inside the image, and the boot command is not "
        "a login shell (no `conda activate`). Use the archive without either:",
        "  1. Upload it to OBS and pass it as an input channel (e.g. env_url), not in the code "
        f"directory ({format_size(CODE_DIR_ADVISED)} advised, 1,000 files at most).",
        "  2. Unpack it at start to local scratch and run its Python directly (custom image "
        "boot command):",
        f"     mkdir -p /cache/env && tar -xzf {MOUNT}/inputs/env_url_0/{packed.archive.name} "
        "-C /cache/env && /cache/env/bin/conda-unpack && /cache/env/bin/python "
        "${MA_JOB_DIR}/<code dir>/train.py",
        "     (an input named env_url is downloaded to inputs/env_url_0; /cache is the node's "
        "local disk).",
        "  3. Or build a custom image with that Python as its one environment "
        "(`majob image dockerfile`), when the archive is large or used by many jobs.",
    ]
    if packed.size > CODE_DIR_ADVISED:
        lines.append(
            f"  The archive is {format_size(packed.size)}: unpacking it costs time on every node "
            "of every job, where a custom image is only pulled."
        )
    return lines

"""Where things are in a ModelArts training container (reference §3.1-3.2).

The compilers name these paths in the job they send; the local runner rebuilds the same tree
under a run directory. Both take them from here, relative to ``HOME``.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path, PurePosixPath

from majob.text import human_bytes

HOME = PurePosixPath("/home/ma-user")  # MA_HOME
MOUNT = HOME / "modelarts"  # MA_MOUNT_PATH
JOB_DIR = MOUNT / "user-job-dir"  # MA_JOB_DIR: the code dir is JOB_DIR/<last segment of code.obs>
LOG_DIR = MOUNT / "log"  # MA_LOG_DIR
CACHE = PurePosixPath("/cache")  # the node's local disk
# A volume mounted on these would hide the code, inputs and outputs, or the node's disk.
RESERVED = (MOUNT, CACHE)

# The emulator's notes in a job's log start with this (after the service's own prefix): which
# engine or image it stands in for and what it did not check. The pipeline repeats them in its
# summary: an emulated stage that passed proves less than a real one.
EMULATOR_NOTE = "[majob emulator] "


def mounted(value: str, mounts: Mapping[PurePosixPath, Path]) -> str | None:
    """``value`` as the folder that stands for a mounted volume here, when it is a path on one
    of ``mounts`` (container mount point -> local folder); else None. The local stage and the
    emulator put an SFS volume's folder where the container has the mount point this way: in
    the arguments, environment values and commands a job is given (a path written into the
    script's own code is not seen: docs/data.md)."""
    for point, folder in mounts.items():
        text = str(point)
        if value == text or value.startswith(text + "/"):
            return str(folder) + value[len(text) :]
    return None


def cache_full(node: int, used: int, capacity: int, flavor: str) -> str:
    """What a job is told when node ``node``'s local disk is past its ``capacity``: ``used``
    bytes of inputs and ``/cache`` on a node of ``flavor``. The emulator's eviction event and
    the local stage's error both say this (docs/data.md)."""
    return (
        f"worker-{node}: the node's local disk is full ({human_bytes(used)} of inputs and "
        f"/cache, capacity {human_bytes(capacity)} on {flavor}): the container was evicted "
        "(ephemeral storage exceeded); write less to /cache, or put the data on SFS Turbo "
        "(majob data plan SPEC)"
    )

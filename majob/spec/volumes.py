"""The spec's ``volumes:``: SFS Turbo (NFS) shares mounted into every node's container.

A ModelArts training job takes ``spec.volumes[].nfs {nfs_server_path, local_path, read_only}``
(reference modelarts.md §2, REST v2 create body) on a dedicated resource pool: SFS Turbo sits in
the pool's VPC, which a public pool's nodes cannot reach. The share is written as SFS Turbo's
console shows its shared path, ``<server>:/<path>`` (``192.168.0.169:/`` is the share's root,
``192.168.0.169:/datasets`` a folder of it). The local stage mounts the ``local:`` stand-in
folder at the same mount point (``runner/layout.py``); docs/data.md has the whole story.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import PurePosixPath

from pydantic import Field, field_validator

from majob import container
from majob.spec.fields import SpecModel
from majob.spec.positions import Loc

Problem = tuple[Loc, str]

# A host name or an IPv4 address, a colon, an absolute export path.
_NFS = re.compile(r"^(?P<server>[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?):(?P<path>/\S*)$")
_EXAMPLE = "e.g. 192.168.0.169:/ (the share's root) or 192.168.0.169:/datasets"


class Volume(SpecModel):
    """An SFS Turbo share mounted at ``mount`` in every node's container."""

    nfs: str = Field(
        description="The SFS Turbo shared path, SERVER:/PATH, e.g. 192.168.0.169:/ or "
        "192.168.0.169:/datasets."
    )
    mount: str = Field(description="Absolute mount point in the container, e.g. /mnt/sfs_turbo.")
    read_only: bool = Field(True, description="Mounted read-only (the default, for inputs).")
    local: str | None = Field(
        None, description="Stand-in folder for the local stage, relative to the spec file."
    )

    @field_validator("nfs")
    @classmethod
    def _server_and_path(cls, value: str) -> str:
        if _NFS.match(value) is None:
            if ":" not in value or value.endswith(":"):
                raise ValueError(f"{value!r} has no path part: write SERVER:/PATH, {_EXAMPLE}")
            raise ValueError(f"{value!r} is not SERVER:/PATH: {_EXAMPLE}")
        return value

    @field_validator("mount")
    @classmethod
    def _absolute(cls, value: str) -> str:
        path = PurePosixPath(value)
        if not path.is_absolute():
            raise ValueError(
                f"mount point {value!r} is relative: write the container path, e.g. /mnt/sfs_turbo"
            )
        if path == PurePosixPath("/") or ".." in path.parts:
            raise ValueError(f"mount point {value!r}: use a folder of its own, e.g. /mnt/sfs_turbo")
        return str(path)

    @property
    def server(self) -> str:
        return self.nfs.split(":", 1)[0]

    @property
    def export_path(self) -> PurePosixPath:
        return PurePosixPath(self.nfs.split(":", 1)[1])

    @property
    def mount_path(self) -> PurePosixPath:
        return PurePosixPath(self.mount)


def _overlap(a: PurePosixPath, b: PurePosixPath) -> bool:
    return a == b or a.is_relative_to(b) or b.is_relative_to(a)


def volume_problems(volumes: Sequence[Volume], pool: str | None) -> list[Problem]:
    """Volumes need a dedicated pool; mount points must not hide ModelArts' paths or each other."""
    problems: list[Problem] = []
    if volumes and pool is None:
        problems.append(
            (
                ("volumes",),
                "SFS Turbo volumes mount only on a dedicated resource pool (a public pool cannot "
                "reach the share's VPC): set resources.pool to the pool's id, or read the data "
                "from OBS as an input",
            )
        )
    for index, volume in enumerate(volumes):
        where: Loc = ("volumes", index, "mount")
        for reserved in container.RESERVED:
            if _overlap(volume.mount_path, reserved):
                problems.append(
                    (
                        where,
                        f"{volume.mount} overlaps {reserved}, which ModelArts uses (the code, "
                        "inputs and outputs, or the node's /cache disk): mount the volume "
                        "elsewhere, e.g. /mnt/sfs_turbo",
                    )
                )
        for other in volumes[:index]:
            if _overlap(volume.mount_path, other.mount_path):
                problems.append(
                    (
                        where,
                        f"{volume.mount} overlaps the mount point {other.mount} of another "
                        "volume: give each volume a folder of its own, e.g. /mnt/sfs_a and "
                        "/mnt/sfs_b",
                    )
                )
    return problems

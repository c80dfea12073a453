"""A create body's ``spec.volumes``, as the emulator reads and mounts them.

ModelArts takes ``spec.volumes[]`` entries of ``nfs {nfs_server_path, local_path, read_only}``
(SFS Turbo), ``pfs`` and ``obs`` (reference modelarts.md §2). The emulator mounts the ``nfs``
kind (a folder of ``majob/emulator/sfs.py``) and refuses the others by name rather than run a
job without its data. A volume needs a dedicated pool (``spec.resource.pool_id``): SFS Turbo is
reached in the pool's VPC. The refusal's code is the service's generic bad-request one; the real
service's own code for it is not public (docs/emulator.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from majob.container import RESERVED
from majob.emulator.modelarts.errors import bad_request
from majob.emulator.modelarts.jsonbody import obj, text
from majob.emulator.sfs import split_share, volume_dir


@dataclass(frozen=True)
class VolumePlan:
    """One SFS Turbo share a job mounts."""

    nfs_server_path: str
    local_path: PurePosixPath
    read_only: bool

    def wire(self) -> dict[str, Any]:
        return {
            "nfs": {
                "nfs_server_path": self.nfs_server_path,
                "local_path": str(self.local_path),
                "read_only": self.read_only,
            }
        }


def read_volumes(spec: dict[str, Any], pool_id: str | None) -> tuple[VolumePlan, ...]:
    """The body's volumes, checked; ``ModelArtsError`` (400) for a bad one."""
    items = spec.get("volumes")
    if items is None:
        return ()
    if not isinstance(items, list):
        raise bad_request("spec.volumes must be an array")
    if items and not pool_id:
        raise bad_request(
            "spec.volumes needs a dedicated resource pool",
            "set spec.resource.pool_id: SFS Turbo is mounted only in a dedicated pool",
        )
    volumes: list[VolumePlan] = []
    for index, item in enumerate(items):
        where = f"spec.volumes[{index}]"
        entry = obj(item, where)
        if "nfs" not in entry:
            kinds = ", ".join(sorted(entry)) or "none"
            raise bad_request(f"{where}: the emulator mounts nfs volumes only (got {kinds})")
        volumes.append(_nfs(obj(entry["nfs"], f"{where}.nfs"), f"{where}.nfs", volumes))
    return tuple(volumes)


def _nfs(nfs: dict[str, Any], where: str, earlier: list[VolumePlan]) -> VolumePlan:
    server_path = text(nfs.get("nfs_server_path"), f"{where}.nfs_server_path") or ""
    try:
        split_share(server_path)
    except ValueError as error:
        raise bad_request(f"{where}.nfs_server_path: {error}", "use e.g. 192.168.0.169:/") from None
    local = PurePosixPath(text(nfs.get("local_path"), f"{where}.local_path") or "")
    if not local.is_absolute() or ".." in local.parts or local == PurePosixPath("/"):
        raise bad_request(f"{where}.local_path {str(local)!r} must be an absolute folder")
    taken = [*RESERVED, *(v.local_path for v in earlier)]
    for other in taken:
        if local == other or local.is_relative_to(other) or other.is_relative_to(local):
            raise bad_request(f"{where}.local_path {local} overlaps {other}")
    read_only = nfs.get("read_only", False)
    if not isinstance(read_only, bool):
        raise bad_request(f"{where}.read_only must be a boolean")
    return VolumePlan(server_path, local, read_only)


def mounts(volumes: tuple[VolumePlan, ...], state_dir: Path) -> dict[PurePosixPath, Path]:
    """Each volume's mount point and the folder that stands for it."""
    return {v.local_path: volume_dir(state_dir, v.nfs_server_path) for v in volumes}

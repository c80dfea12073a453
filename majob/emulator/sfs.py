"""The emulator's SFS Turbo file systems: one real folder per share, shared by every job.

A job's ``spec.volumes[].nfs.nfs_server_path`` names a share as SFS Turbo shows its shared path,
``<server>:/<path>``. The server is one file system: ``<state>/sfs/<server>/``, created on first
use and kept across jobs and emulator restarts (like the data on a real share); ``<path>`` is a
folder of it (``192.168.0.169:/`` its root, ``192.168.0.169:/datasets`` the ``datasets`` folder).
Every node of a job that mounts it sees the same folder at the mount point.

Each file system has a capacity (``quota``): what a user bought. ``DEFAULT_QUOTA_BYTES`` unless
``set_quota`` (tests, or a user who wants the emulator to match their share) says otherwise,
kept in ``<state>/sfs/quotas.json``. The emulator cannot make the kernel answer ``ENOSPC``
without root, so a running job's volumes are measured while it runs (``volume_watch.py``) and a
job past the capacity is stopped the way a full share ends it: failed, with the event saying so.
"""

from __future__ import annotations

import json
from pathlib import Path, PurePosixPath

from majob.emulator.statedir import make_private_dir, write_private

SFS_DIR = "sfs"
QUOTAS_FILE = "quotas.json"
# SFS Turbo is sold from 500 GB (the smallest standard file system; docs/data.md): the
# emulator's shares hold that much unless told otherwise.
DEFAULT_QUOTA_BYTES = 500 * 10**9


def split_share(nfs_server_path: str) -> tuple[str, PurePosixPath]:
    """``server:/path`` as the server and the path on it; ValueError when it is not that."""
    server, colon, path = nfs_server_path.partition(":")
    export = PurePosixPath(path)
    if not server or not colon or not export.is_absolute() or ".." in export.parts:
        raise ValueError(f"{nfs_server_path!r} is not SERVER:/PATH")
    if "/" in server or server in (".", ".."):
        raise ValueError(f"{nfs_server_path!r}: {server!r} is not a server name")
    return server, export


def share_root(state_dir: Path, nfs_server_path: str) -> Path:
    """The whole file system ``nfs_server_path`` is on (what its capacity counts)."""
    server, _ = split_share(nfs_server_path)
    return state_dir / SFS_DIR / server


def volume_dir(state_dir: Path, nfs_server_path: str) -> Path:
    """The folder that ``nfs_server_path`` names, created (private) if it is not there yet."""
    _, export = split_share(nfs_server_path)
    root = share_root(state_dir, nfs_server_path)
    make_private_dir(state_dir / SFS_DIR)
    make_private_dir(root)
    folder = root.joinpath(*export.parts[1:])
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def _quotas(state_dir: Path) -> dict[str, int]:
    try:
        data = json.loads((state_dir / SFS_DIR / QUOTAS_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def quota(state_dir: Path, nfs_server_path: str) -> int:
    """The capacity in bytes of the file system ``nfs_server_path`` is on."""
    server, _ = split_share(nfs_server_path)
    return _quotas(state_dir).get(server, DEFAULT_QUOTA_BYTES)


def set_quota(state_dir: Path, nfs_server_path: str, capacity_bytes: int) -> None:
    """Give the file system ``nfs_server_path`` is on a capacity of ``capacity_bytes``."""
    if capacity_bytes < 0:
        raise ValueError("a capacity is at least 0 bytes")
    server, _ = split_share(nfs_server_path)
    make_private_dir(state_dir / SFS_DIR)
    quotas = {**_quotas(state_dir), server: capacity_bytes}
    write_private(state_dir / SFS_DIR / QUOTAS_FILE, json.dumps(quotas, indent=2))

"""Is a path on a network file system? The ledger asks: sqlite's WAL mode needs memory shared
between every process that opens the database, which processes on two hosts of an NFS or SMB
share do not have, so a ledger there uses another journal mode (see ``ledger.py``).

The mount table comes from ``/proc/self/mounts`` (Linux), else from the ``mount`` command's
output (macOS and the BSDs print ``dev on /point (type, options)``, Linux ``dev on /point type
t (options)``). Tests pass their own table.
"""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

# Remote and cluster file systems sqlite's documentation warns about (locking or shared memory
# not coherent between hosts); FUSE file systems appear as ``fuse.<name>``.
NETWORK_TYPES = frozenset(
    {"9p", "afpfs", "afs", "ceph", "cifs", "coda", "fuse.ceph", "fuse.glusterfs", "fuse.rclone",
     "fuse.s3fs", "fuse.sshfs", "gfs2", "glusterfs", "gpfs", "lustre", "ncpfs", "nfs", "nfs4",
     "smb2", "smb3", "smbfs", "webdav"}
)  # fmt: skip
PROC_MOUNTS = Path("/proc/self/mounts")


@dataclass(frozen=True)
class Mount:
    point: str  # where it is mounted, absolute
    type: str  # nfs4, ext4, apfs, ...


def is_network_type(fs_type: str) -> bool:
    return fs_type in NETWORK_TYPES or fs_type.startswith("nfs")


def network_filesystem(path: Path, mounts: Sequence[Mount] | None = None) -> str | None:
    """The type of the network file system ``path`` is on, or None (local, or unknown)."""
    fs_type = filesystem_type(path, system_mounts() if mounts is None else mounts)
    return fs_type if fs_type is not None and is_network_type(fs_type) else None


def filesystem_type(path: Path, mounts: Sequence[Mount]) -> str | None:
    """The type of the mount that holds ``path`` (the longest mount point above it; of equal
    ones, the last mounted, which hides the others)."""
    target = os.path.realpath(path)
    best: Mount | None = None
    for mount in mounts:
        point = mount.point.rstrip("/") or "/"
        above = point == "/" or target == point or target.startswith(point + "/")
        if above and (best is None or len(point) >= len(best.point.rstrip("/") or "/")):
            best = mount
    return best.type if best is not None else None


def system_mounts() -> list[Mount]:
    """This host's mount table; empty when it cannot be read."""
    try:
        return parse_proc_mounts(PROC_MOUNTS.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        pass
    try:
        out = subprocess.run(
            ["mount"], capture_output=True, text=True, timeout=10, check=False
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return []
    return parse_mount_output(out)


_OCTAL = re.compile(r"\\([0-7]{3})")


def parse_proc_mounts(text: str) -> list[Mount]:
    """``/proc/self/mounts``: ``device point type options 0 0``, blanks in a point written as
    octal escapes (``\\040``)."""
    mounts = []
    for line in text.splitlines():
        fields = line.split()
        if len(fields) >= 3:
            point = _OCTAL.sub(lambda m: chr(int(m.group(1), 8)), fields[1])
            mounts.append(Mount(point, fields[2]))
    return mounts


_LINUX_MOUNT = re.compile(r"^.* on (?P<point>/.*) type (?P<type>\S+) \(.*\)$")
_BSD_MOUNT = re.compile(r"^.* on (?P<point>/.*) \((?P<type>[^,)]+)[,)].*$")


def parse_mount_output(text: str) -> list[Mount]:
    """The ``mount`` command's lines, in its Linux or its BSD/macOS form."""
    mounts = []
    for line in text.splitlines():
        found = _LINUX_MOUNT.match(line) or _BSD_MOUNT.match(line)
        if found is not None:
            mounts.append(Mount(found["point"], found["type"].strip()))
    return mounts

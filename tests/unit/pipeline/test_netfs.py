"""Which file system holds a path: the mount tables of Linux and macOS, longest mount first."""

from __future__ import annotations

from pathlib import Path

from majob.pipeline.netfs import (
    Mount,
    filesystem_type,
    network_filesystem,
    parse_mount_output,
    parse_proc_mounts,
    system_mounts,
)

PROC_MOUNTS = """\
overlay / overlay rw,relatime 0 0
server:/export /home nfs4 rw,vers=4.2 0 0
//nas/team /mnt/team\\040share cifs rw 0 0
/dev/sda1 /home/local ext4 rw 0 0
"""

LINUX_MOUNT = """\
server:/export on /home type nfs4 (rw,relatime,vers=4.2)
/dev/sda1 on /home/my type dir type ext4 (rw)
"""

MACOS_MOUNT = """\
/dev/disk3s1s1 on / (apfs, sealed, local, read-only, journaled)
//alice@nas._smb._tcp.local/team on /Volumes/team (smbfs, nodev, nosuid, mounted by alice)
nas:/export on /Volumes/export (nfs)
"""


def test_proc_mounts_with_escaped_blanks_and_nested_mounts() -> None:
    mounts = parse_proc_mounts(PROC_MOUNTS)
    assert Mount("/mnt/team share", "cifs") in mounts
    assert network_filesystem(Path("/home/alice/project/.majob"), mounts) == "nfs4"
    assert network_filesystem(Path("/home/local/project"), mounts) is None  # mounted inside
    assert network_filesystem(Path("/mnt/team share/x"), mounts) == "cifs"
    assert network_filesystem(Path("/homework"), mounts) is None  # not under /home


def test_the_mount_command_in_its_linux_and_macos_forms() -> None:
    assert parse_mount_output(LINUX_MOUNT) == [
        Mount("/home", "nfs4"),
        Mount("/home/my type dir", "ext4"),
    ]
    mounts = parse_mount_output(MACOS_MOUNT)
    assert filesystem_type(Path("/Users/alice"), mounts) == "apfs"
    assert network_filesystem(Path("/Volumes/team/ledger.db"), mounts) == "smbfs"
    assert network_filesystem(Path("/Volumes/export/a"), mounts) == "nfs"


def test_the_mount_mounted_last_over_the_same_point_wins() -> None:
    mounts = [Mount("/data", "nfs"), Mount("/data", "ext4")]
    assert filesystem_type(Path("/data/x"), mounts) == "ext4"


def test_this_hosts_table_knows_the_temporary_dir(tmp_path: Path) -> None:
    assert filesystem_type(tmp_path, system_mounts()) is not None

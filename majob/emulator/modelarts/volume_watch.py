"""A running job's SFS volumes measured against their file systems' capacity.

On ModelArts a write to a full SFS Turbo share fails in the script (``OSError: [Errno 28] No
space left on device``) and the job ends as the script does. The emulator cannot make a folder
answer ``ENOSPC`` without root, so it measures the shares a job writes to (a read-only mount
cannot grow) every ``period`` seconds and once at the end, and a job found past a capacity is
stopped and failed with an event that says which share is full and by how much.
"""

from __future__ import annotations

import time
from pathlib import Path

from majob.emulator import sfs
from majob.emulator.modelarts.volumes import VolumePlan, mounts
from majob.text import human_bytes

PERIOD = 0.5  # seconds between two measurements (a walk of the share's files)


class VolumeWatch:
    """Measures the writable shares of one job."""

    def __init__(self, volumes: tuple[VolumePlan, ...], state_dir: Path, period: float = PERIOD):
        self.state_dir = state_dir
        self.period = period
        self.shares = sorted({v.nfs_server_path for v in volumes if not v.read_only})
        self.mounts = mounts(volumes, state_dir)  # each mount point's folder, made
        self._next = 0.0

    def full(self, *, now: bool = False) -> str | None:
        """The event text when a share is past its capacity (measured when ``period`` has gone
        by, or ``now``); None otherwise."""
        if not self.shares or (not now and time.monotonic() < self._next):
            return None
        self._next = time.monotonic() + self.period
        for share in self.shares:
            capacity = sfs.quota(self.state_dir, share)
            used = sfs.used_bytes(sfs.share_root(self.state_dir, share))
            if used > capacity:
                return (
                    f"the SFS Turbo file system of {share} is full ({human_bytes(used)} written, "
                    f"capacity {human_bytes(capacity)}): writes to it fail with 'No space left on "
                    "device' (errno 28); free space on the share or expand it, then run the "
                    "job again"
                )
        return None


class VolumeFull(Exception):
    """A job's share is past its capacity: the job fails with this text (its event)."""

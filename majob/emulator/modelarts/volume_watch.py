"""A running job's disks measured against their capacity: its writable SFS shares, and each
node's ``/cache`` (with the inputs downloaded onto the node's disk).

On ModelArts a write to a full SFS Turbo share fails in the script (``OSError: [Errno 28] No
space left on device``) and the job ends as the script does; a node whose local disk fills is
evicted and the job fails. The emulator cannot make a folder answer ``ENOSPC`` without root, so
it measures these folders every ``period`` seconds and once at the end, and a job found past a
capacity is stopped and failed with an event that says which disk is full and by how much.
"""

from __future__ import annotations

import time
from pathlib import Path

from majob.emulator import sfs
from majob.emulator.modelarts.nodecache import cache_size
from majob.emulator.modelarts.plan import JobPlan
from majob.emulator.modelarts.volumes import mounts
from majob.runner.nodecache import node_cache_dir, overflow
from majob.storage.tree_size import tree_size
from majob.text import human_bytes

PERIOD = 0.5  # seconds between two measurements (a walk of the folders' files)


class VolumeWatch:
    """Measures the writable shares and the nodes' /cache of one job."""

    def __init__(self, plan: JobPlan, job_dir: Path, modelarts_dir: Path, period: float = PERIOD):
        self.state_dir = modelarts_dir.parent
        self.plan = plan
        self.job_dir = job_dir
        self.period = period
        self.shares = sorted({v.nfs_server_path for v in plan.volumes if not v.read_only})
        self.mounts = mounts(plan.volumes, self.state_dir)  # each mount point's folder, made
        self.cache = cache_size(modelarts_dir, plan.flavor.flavor_id, plan.flavor.disk_bytes)
        self._inputs: int | None = None  # the downloaded inputs' bytes, measured once
        self._next = 0.0

    def full(self, *, now: bool = False) -> str | None:
        """The event text when a disk is past its capacity (measured when ``period`` has gone
        by, or ``now``); None otherwise."""
        if (not self.shares and self.cache is None) or (not now and time.monotonic() < self._next):
            return None
        self._next = time.monotonic() + self.period
        return self._share_full() or self._cache_full()

    def _share_full(self) -> str | None:
        for share in self.shares:
            capacity = sfs.quota(self.state_dir, share)
            used = tree_size(sfs.share_root(self.state_dir, share))
            if used > capacity:
                return (
                    f"the SFS Turbo file system of {share} is full ({human_bytes(used)} written, "
                    f"capacity {human_bytes(capacity)}): writes to it fail with 'No space left on "
                    "device' (errno 28); free space on the share or expand it, then run the "
                    "job again"
                )
        return None

    def _cache_full(self) -> str | None:
        if self.cache is None:
            return None
        # The inputs are downloaded once here for all nodes (on ModelArts each node has its
        # copy), before the nodes start: measured at the first look only.
        if self._inputs is None:
            self._inputs = tree_size(self.job_dir / "ma-user" / "modelarts" / "inputs")
        folders = [node_cache_dir(self.job_dir, node) for node in range(self.plan.nodes)]
        return overflow(self._inputs, folders, self.cache, self.plan.flavor.flavor_id)


class VolumeFull(Exception):
    """A job's disk is past its capacity: the job fails with this text (its event)."""

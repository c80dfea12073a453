"""Each node's ``/cache`` against its capacity: the node's folder plus the inputs on its disk.

Spec-free, shared with the emulator's executor. On ModelArts ``/cache`` is the node's local
disk, sized by the flavor, and the inputs are downloaded onto it before the boot file starts;
a node whose disk fills is evicted and the job fails. Neither the local stage nor the emulator
can make a folder answer ``ENOSPC`` without root, so both measure: each node's ``/cache``
folder plus the inputs' bytes (the same for every node: each node downloads every input),
every ``PERIOD`` seconds while the nodes run and once when they have exited. Past the
capacity, the run or job fails with ``majob.container.cache_full``'s text.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from majob.container import cache_full
from majob.storage.tree_size import tree_size

PERIOD = 0.5  # seconds between two measurements (a walk of the folders' files)


def node_cache_dir(parent: Path, node: int) -> Path:
    """Where node ``node``'s ``/cache`` is, for a run or job whose tree is under ``parent``."""
    return parent / "cache" / f"worker-{node}"


def overflow(inputs: int, folders: Sequence[Path], capacity: int, flavor: str) -> str | None:
    """The text for the first node (``folders[i]`` is node i's ``/cache``) whose ``inputs``
    bytes and folder together are past ``capacity``; None when every node fits."""
    for node, folder in enumerate(folders):
        used = inputs + tree_size(folder)
        if used > capacity:
            return cache_full(node, used, capacity, flavor)
    return None


class CacheWatch:
    """The nodes' ``/cache`` of one run, measured at most every ``period`` seconds.
    ``inputs`` gives the inputs' bytes: asked once, at the first look (the inputs are on the
    disk before the nodes start)."""

    def __init__(
        self,
        capacity: int,
        flavor: str,
        folders: Sequence[Path],
        inputs: Callable[[], int],
        period: float = PERIOD,
    ) -> None:
        self.capacity = capacity
        self.flavor = flavor
        self.folders = tuple(folders)
        self.period = period
        self._inputs_of = inputs
        self._inputs: int | None = None
        self._next = 0.0

    def full(self, *, now: bool = False) -> str | None:
        """The text when a node is past the capacity (measured when ``period`` has gone by,
        or ``now``); None otherwise."""
        if not now and time.monotonic() < self._next:
            return None
        self._next = time.monotonic() + self.period
        if self._inputs is None:
            self._inputs = self._inputs_of()
        return overflow(self._inputs, self.folders, self.capacity, self.flavor)

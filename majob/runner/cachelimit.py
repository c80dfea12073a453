"""The local stage's ``/cache`` limit: each node's capacity (``--cache-size``, else the local
disk majob's catalogue lists for the spec's flavor) and the watch over the run's folders
(``nodecache.py``, shared with the emulator)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from majob.runner.layout import ContainerPaths
from majob.runner.nodecache import CacheWatch
from majob.spec.catalog import catalogue_flavor
from majob.spec.models import JobSpec
from majob.storage.tree_size import tree_size


def cache_capacity(spec: JobSpec, size: int | None) -> tuple[int | None, tuple[str, ...]]:
    """Each node's /cache capacity in bytes: ``size`` (``--cache-size``) when given, else the
    local disk majob's catalogue lists for the spec's flavor (``Flavor.disk_bytes``); None
    (not limited) when it lists none, with the notice that says so."""
    if size is not None:
        return size, ()
    flavor = spec.resources.flavor
    listed = catalogue_flavor(flavor)
    if listed is not None and listed.disk_bytes is not None:
        return listed.disk_bytes, ()
    what = f"flavor {flavor}" if flavor else "a dedicated pool's nodes (no resources.flavor)"
    return None, (
        f"/cache is not limited: majob's catalogue lists no local disk for {what}; "
        "pass --cache-size SIZE (e.g. 100GB) to check the run against one",
    )


def cache_watch(
    spec: JobSpec, paths: ContainerPaths, capacity: int | None, inputs: Sequence[Path]
) -> CacheWatch | None:
    """The nodes' /cache folders against ``capacity`` (None: not limited), the ``inputs``
    (their local stand-ins) counted on every node, as the emulator counts its downloads."""
    if capacity is None:
        return None
    sources = tuple(inputs)

    def inputs_bytes() -> int:
        return sum(tree_size(p) if p.is_dir() else p.stat().st_size for p in sources)

    flavor = spec.resources.flavor or f"pool {spec.resources.pool}"
    return CacheWatch(capacity, flavor, paths.caches, inputs_bytes)

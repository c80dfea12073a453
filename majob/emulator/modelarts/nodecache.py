"""Each node's ``/cache``: the local disk of its flavor, a folder of its own, with a capacity.

On ModelArts ``/cache`` is the node's local NVMe disk (reference modelarts.md §3.2), sized by
the flavor (``flavor_info.disk`` of the flavor list); the inputs are downloaded onto the node's
disk too. When the disk fills, the node's container is evicted and the job fails. The emulator
gives each node a folder for ``/cache`` (a path on ``/cache`` in a job's parameters or
environment becomes that folder, as with volumes) and counts, per node, that folder plus the
job's downloaded inputs against the capacity: the flavor's disk, unless
``set_cache_size(state_dir, flavor_id, bytes)`` says otherwise (tests use a few KB; kept in
``<state>/modelarts/cache_sizes.json``). A flavor that lists no disk is not limited. Where the
folder is and how it is measured, the local stage shares (``majob.runner.nodecache``).
"""

from __future__ import annotations

import json
from pathlib import Path

from majob.emulator.statedir import make_private_dir, write_private

SIZES_FILE = "cache_sizes.json"


def _sizes(modelarts_dir: Path) -> dict[str, int]:
    try:
        data = json.loads((modelarts_dir / SIZES_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): int(v) for k, v in data.items()} if isinstance(data, dict) else {}


def cache_size(modelarts_dir: Path, flavor_id: str, listed: int | None) -> int | None:
    """A node's /cache capacity for ``flavor_id``: what was set, else the flavor's ``listed``."""
    return _sizes(modelarts_dir).get(flavor_id, listed)


def set_cache_size(state_dir: Path, flavor_id: str, capacity_bytes: int) -> None:
    """Give every node of ``flavor_id`` a /cache of ``capacity_bytes`` (the emulator's state dir:
    kept in its ``modelarts/``)."""
    if capacity_bytes < 0:
        raise ValueError("a capacity is at least 0 bytes")
    folder = state_dir / "modelarts"
    make_private_dir(folder)
    sizes = {**_sizes(folder), flavor_id: capacity_bytes}
    write_private(folder / SIZES_FILE, json.dumps(sizes, indent=2))

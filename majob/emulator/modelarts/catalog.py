"""The fake ModelArts's own catalogue: the training flavors and engines it offers.

``catalog.json`` holds them as the service serves them (``GET /training-job-flavors`` items,
``GET /training-job-engines`` items): the flavor ids, vCPU/memory and ``max_num`` of the CPU
flavors and the engine name/version ids documented in reference modelarts.md §3.4, the current
PyTorch engine ``pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64`` of the public "Preparing
a Model Training Image" page (its id and run user unconfirmed), and the Ascend examples
``job_specs/npu_resnet.yaml`` uses (marked unconfirmed there). The emulator keeps
its own copy, as the real service does: it never reads what the client believes.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majob.sizes import parse_size

CATALOG_FILE = Path(__file__).with_name("catalog.json")


@dataclass(frozen=True)
class FakeFlavor:
    """A flavor the fake offers; ``item`` is how the flavor list serves it."""

    item: Mapping[str, Any]

    @property
    def flavor_id(self) -> str:
        return str(self.item["flavor_id"])

    @property
    def flavor_type(self) -> str:
        return str(self.item["flavor_type"])

    @property
    def max_num(self) -> int:
        """Nodes per job; 1: no distributed training."""
        return int(self.item["max_num"])

    @property
    def cores(self) -> int:
        """vCPUs per node: what a container's CPU usage is a share of."""
        return max(1, int(self.item["flavor_info"].get("cpu", {}).get("core_num", 1)))

    @property
    def memory_bytes(self) -> int:
        """Memory per node: what a container's memory usage is a share of."""
        memory = self.item["flavor_info"].get("memory", {})
        scale = {"GB": 1024**3, "MB": 1024**2}.get(str(memory.get("unit", "GB")), 1024**3)
        return max(1, int(float(memory.get("size", 1)) * scale))

    @property
    def disk_bytes(self) -> int | None:
        """The node's local disk, its ``/cache`` (decimal units, as the list writes them);
        None when the flavor lists none (a dedicated pool's)."""
        disk = self.item["flavor_info"].get("disk") or {}
        return parse_size(f"{disk['size']}{disk.get('unit', 'GB')}") if "size" in disk else None

    @property
    def accelerators(self) -> int:
        """GPUs or NPUs per node (``MA_NUM_GPUS``)."""
        info = self.item["flavor_info"]
        card = info.get("gpu") or info.get("npu") or {}
        return int(card.get("unit_num", 0))


@dataclass(frozen=True)
class FakeEngine:
    """A preset engine the fake offers; ``item`` is how the engine list serves it."""

    item: Mapping[str, Any]

    @property
    def engine_id(self) -> str:
        return str(self.item["engine_id"])

    @property
    def engine_name(self) -> str:
        return str(self.item["engine_name"])

    @property
    def engine_version(self) -> str:
        return str(self.item["engine_version"])

    @property
    def is_ascend(self) -> bool:
        return self.engine_name == "Ascend-Powered-Engine" or "cann" in self.engine_version


@functools.cache
def _catalog() -> tuple[tuple[FakeFlavor, ...], tuple[FakeEngine, ...]]:
    data = json.loads(CATALOG_FILE.read_text(encoding="utf-8"))
    return (
        tuple(FakeFlavor(item) for item in data["flavors"]),
        tuple(FakeEngine(item) for item in data["engines"]),
    )


def flavors() -> tuple[FakeFlavor, ...]:
    return _catalog()[0]


def engines() -> tuple[FakeEngine, ...]:
    return _catalog()[1]


def find_flavor(flavor_id: str) -> FakeFlavor | None:
    return next((f for f in flavors() if f.flavor_id == flavor_id), None)


# How many nodes a job in a dedicated CPU pool may ask for: a real pool's size is its own; the
# emulator has no pools, so it allows what its largest CPU flavor allows.
def find_engine(
    *, engine_id: str | None = None, name: str | None = None, version: str | None = None
) -> FakeEngine | None:
    """By id, or by name and version (both as the service spells them)."""
    for engine in engines():
        if engine_id is not None and engine.engine_id == engine_id:
            return engine
        if engine_id is None and engine.engine_name == name and engine.engine_version == version:
            return engine
    return None

"""The flavors and engines ModelArts offers: the two types majob reads them into, and the ones
documented in the reference (modelarts.md §3.4).

A ``Flavor`` or an ``Engine`` means the same wherever it comes from: the service's own lists
(``GET training-job-flavors`` / ``training-job-engines``, read by ``from_wire``; regions differ,
so pre-flight asks the service) or the documented catalogue below, which needs no account and no
network (the image checks read it). The emulator keeps a catalogue of its own: client and
emulator agree because both follow the reference, not because they share this module.

What is documented and what is not: the flavor ids, vCPU/memory and ``max_num`` of the CPU
flavors and the engine name/version ids are from the reference; ``pytorch_2.1.0-cuda_12.1-
py_3.10.6-ubuntu_22.04-x86_64`` (the current PyTorch engine the bundled specs use) is from the
public "Preparing a Model Training Image" page (develop-modelarts-1417), its engine id
``pytorch-2.1.0`` follows the ``pytorch-1.8.0`` pattern, unconfirmed; the Ascend training ids
(``modelarts.bm.snt9.xlarge.8``, the ``pytorch_2.1.0-cann_8.0.rc1...`` engine) are the examples
``job_specs/npu_resnet.yaml`` uses, marked **[U]** in the reference. Image addresses follow the
platform's ``<engine_ver>-[cpu|cuda_x|cann_x]-py_x-<os>-<arch>`` naming under the preset image
organisation; the exact SWR paths vary by region and are not documented.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from majob.sizes import parse_size

PRESET_IMAGE_REPO = "swr.cn-north-4.myhuaweicloud.com/modelarts-job-dev-image"


@dataclass(frozen=True)
class Flavor:
    """A resource flavor: what one node (one container) gets. ``cpu``, ``gpu``, ``npu`` and
    ``memory`` describe the parts as the service lists them (``arch=x86 core_num=8``)."""

    id: str
    name: str = ""
    type: str = ""  # CPU, GPU, Ascend
    max_num: int = 1  # nodes per job; 1 = no distributed training
    cpu: str = ""
    gpu: str = ""
    npu: str = ""
    memory: str = ""
    disk: str = ""  # the node's local disk (/cache), as the flavor list gives it

    @property
    def is_ascend(self) -> bool:
        return self.type.lower() == "ascend" or bool(self.npu)

    @property
    def disk_bytes(self) -> int | None:
        """The node's local disk in bytes (decimal GB, as the list's ``unit``); None when the
        flavor says nothing of it."""
        found = re.fullmatch(r"size=(\d+(?:\.\d+)?) unit=([KMGT]B)", self.disk)
        return parse_size(found[1] + found[2]) if found else None

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Flavor:
        """Read an item of ``GET training-job-flavors``."""
        info = data.get("flavor_info") or {}
        return cls(
            id=str(data.get("flavor_id", "")),
            name=str(data.get("flavor_name") or ""),
            type=str(data.get("flavor_type") or ""),
            max_num=_max_nodes(info.get("max_num")),
            cpu=_describe(info.get("cpu")),
            gpu=_describe(info.get("gpu")),
            npu=_describe(info.get("npu")),
            memory=_describe(info.get("memory")),
            disk=_describe(info.get("disk")),
        )

    def to_cache(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in Flavor.__dataclass_fields__}


def _describe(part: object) -> str:
    if isinstance(part, Mapping):
        return " ".join(f"{k}={v}" for k, v in part.items() if v not in (None, ""))
    return "" if part is None else str(part)


def _max_nodes(value: object) -> int:
    """``max_num`` as a count of nodes: 1 when it is missing, zero or unreadable."""
    try:
        return int(str(value)) or 1
    except ValueError:
        return 1


@dataclass(frozen=True)
class Engine:
    """A preset engine: its name and version id (``image.engine`` / ``image.version`` of a
    spec), and the image it runs in."""

    name: str
    version: str
    id: str = ""
    image: str = ""

    @property
    def is_ascend(self) -> bool:
        text = f"{self.name} {self.version}".lower()
        return "ascend" in text or "cann" in text

    @classmethod
    def from_wire(cls, data: Mapping[str, Any]) -> Engine:
        """Read an item of ``GET training-job-engines``."""
        image = data.get("image_info") or {}
        return cls(
            name=str(data.get("engine_name", "")),
            version=str(data.get("engine_version", "")),
            id=str(data.get("engine_id") or ""),
            image=str(image.get("gpu_image_url") or image.get("cpu_image_url") or ""),
        )

    def to_cache(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in Engine.__dataclass_fields__}


@dataclass(frozen=True)
class Offerings:
    """The flavors and engines one source offers: a service's lists, or the catalogue below."""

    flavors: tuple[Flavor, ...]
    engines: tuple[Engine, ...]

    def flavor(self, flavor_id: str) -> Flavor | None:
        return next((f for f in self.flavors if f.id == flavor_id), None)

    def engine_names(self) -> list[str]:
        return sorted({e.name for e in self.engines})

    def versions_of(self, name: str) -> list[str]:
        return sorted(e.version for e in self.engines if e.name == name)


def _cpu(cores: int, arch: str = "x86") -> str:
    return f"arch={arch} core_num={cores}"


def _gb(size: int) -> str:
    return f"size={size} unit=GB"


def _cards(count: int, product: str, memory: str) -> str:
    return f"unit_num={count} product_name={product} memory={memory}"


FLAVORS: tuple[Flavor, ...] = (
    Flavor(
        "modelarts.vm.cpu.2u",
        "Computing CPU(2U) instance",
        "CPU",
        1,
        _cpu(2),
        memory=_gb(8),
        disk=_gb(50),
    ),
    Flavor(
        "modelarts.vm.cpu.8u",
        "Computing CPU(8U) instance",
        "CPU",
        16,
        _cpu(8),
        memory=_gb(32),
        disk=_gb(100),
    ),
    Flavor(
        "modelarts.p3.large.public.free",
        "GPU: 1*NVIDIA-V100(32GB) | CPU: 8 vCPUs 64GB (free)",
        "GPU",
        1,
        _cpu(8),
        gpu=_cards(1, "NVIDIA-V100", "32GB"),
        memory=_gb(64),
        disk=_gb(780),
    ),
    Flavor(
        "modelarts.p3.large.public",
        "GPU: 1*NVIDIA-V100(32GB) | CPU: 8 vCPUs 64GB",
        "GPU",
        16,
        _cpu(8),
        gpu=_cards(1, "NVIDIA-V100", "32GB"),
        memory=_gb(64),
        disk=_gb(780),
    ),
    Flavor(
        "modelarts.vm.gpu.p100",
        "GPU: 1*NVIDIA-P100(16GB) | CPU: 8 vCPUs 64GB",
        "GPU",
        8,
        _cpu(8),
        gpu=_cards(1, "NVIDIA-P100", "16GB"),
        memory=_gb(64),
    ),
    Flavor(
        "modelarts.bm.snt9.xlarge.8",
        "Ascend: 8*Ascend-snt9(32GB) | ARM: 192 vCPUs 1536GB",
        "Ascend",
        16,
        _cpu(192, "arm"),
        npu=_cards(8, "Ascend-snt9", "32GB"),
        memory=_gb(1536),
    ),
)


def catalogue_flavor(flavor_id: str | None) -> Flavor | None:
    """The flavor ``flavor_id`` names in majob's catalogue; None when it lists none."""
    return next((f for f in FLAVORS if f.id == flavor_id), None)


def _preset(engine_id: str, name: str, version: str) -> Engine:
    return Engine(name, version, engine_id, f"{PRESET_IMAGE_REPO}/{version}")


ENGINES: tuple[Engine, ...] = (
    _preset("pytorch-1.8.0", "PyTorch", "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"),
    _preset("pytorch-2.1.0", "PyTorch", "pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64"),
    _preset(
        "tensorflow-2.1.0", "TensorFlow", "tensorflow_2.1.0-cuda_10.1-py_3.7-ubuntu_18.04-x86_64"
    ),
    _preset(
        "horovod-0.22.1",
        "Horovod",
        "horovod_0.22.1-pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
    ),
    _preset("mpi-mindspore-1.3.0", "MPI", "mindspore_1.3.0-cuda_10.1-py_3.7-ubuntu_1804-x86_64"),
    _preset(
        "ascend-mindspore-1.6.0",
        "Ascend-Powered-Engine",
        "mindspore_1.6.0-cann_5.0.3.6-py_3.7-euler_2.8.3-aarch64",
    ),
    _preset(
        "ascend-pytorch-2.1.0",
        "Ascend-Powered-Engine",
        "pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64",
    ),
)

"""The emulator's catalogue of training flavors and engines, as it serves them (``to_api``).

Only the emulator imports this module (it serves these from ``/training-job-flavors`` and
``/training-job-engines``); it stays here until the emulator carries its own copy (issue 19: the
emulator must not import ``majob.service``), and then goes. majob's client side reads the
documented catalogue of ``majob.spec.catalog``, whose ``Flavor`` and ``Engine`` are the ones the
service's answers are read into; the records here are the emulator's own, richer shape.

The data is the reference's (modelarts.md §3.4); see ``majob.spec.catalog`` for what is
documented and what is not.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

FlavorType = Literal["CPU", "GPU", "Ascend"]
PRESET_IMAGE_REPO = "swr.cn-north-4.myhuaweicloud.com/modelarts-job-dev-image"


@dataclass(frozen=True)
class Flavor:
    """A training flavor: what one node (one container) gets."""

    flavor_id: str
    flavor_name: str
    flavor_type: FlavorType
    max_num: int  # nodes per job; 1 = no distributed training
    cpu_cores: int
    memory_gb: int
    gpu: int = 0
    npu: int = 0
    accelerator: str = ""  # product name of the GPU/NPU
    accelerator_memory: str = ""
    disk_gb: int = 0
    cpu_arch: str = "x86"

    @property
    def accelerators(self) -> int:
        return self.gpu or self.npu

    def to_api(self) -> dict[str, Any]:
        """The item of ``GET /training-job-flavors`` (``FlavorResponseWithSupport``)."""
        info: dict[str, Any] = {
            "max_num": self.max_num,
            "cpu": {"arch": self.cpu_arch, "core_num": self.cpu_cores},
            "memory": {"size": self.memory_gb, "unit": "GB"},
        }
        if self.gpu:
            info["gpu"] = {
                "unit_num": self.gpu,
                "product_name": self.accelerator,
                "memory": self.accelerator_memory,
            }
        if self.npu:
            info["npu"] = {
                "unit_num": str(self.npu),
                "product_name": self.accelerator,
                "memory": self.accelerator_memory,
            }
        if self.disk_gb:
            info["disk"] = {"size": self.disk_gb, "unit": "GB"}
        return {
            "flavor_id": self.flavor_id,
            "flavor_name": self.flavor_name,
            "flavor_type": self.flavor_type,
            "billing": {"code": self.flavor_id, "unit_num": 1},
            "max_num": self.max_num,
            "flavor_info": info,
        }


@dataclass(frozen=True)
class Engine:
    """A preset engine: name + version id, and the images it runs in."""

    engine_id: str
    engine_name: str
    engine_version: str
    run_user: str
    cpu_image_url: str
    gpu_image_url: str
    v1_compatible: bool = False

    @property
    def is_ascend(self) -> bool:
        return self.engine_name == "Ascend-Powered-Engine" or "cann" in self.engine_version

    def to_api(self) -> dict[str, Any]:
        """The item of ``GET /training-job-engines`` (``ListEnginesItems``)."""
        return {
            "engine_id": self.engine_id,
            "engine_name": self.engine_name,
            "engine_version": self.engine_version,
            "v1_compatible": self.v1_compatible,
            "run_user": self.run_user,
            "image_info": {
                "cpu_image_url": self.cpu_image_url,
                "gpu_image_url": self.gpu_image_url,
                "image_version": self.engine_version,
            },
        }


FLAVORS: tuple[Flavor, ...] = (
    Flavor("modelarts.vm.cpu.2u", "Computing CPU(2U) instance", "CPU", 1, 2, 8, disk_gb=50),
    Flavor("modelarts.vm.cpu.8u", "Computing CPU(8U) instance", "CPU", 16, 8, 32, disk_gb=100),
    Flavor(
        "modelarts.p3.large.public.free",
        "GPU: 1*NVIDIA-V100(32GB) | CPU: 8 vCPUs 64GB (free)",
        "GPU",
        1,
        8,
        64,
        gpu=1,
        accelerator="NVIDIA-V100",
        accelerator_memory="32GB",
        disk_gb=780,
    ),
    Flavor(
        "modelarts.p3.large.public",
        "GPU: 1*NVIDIA-V100(32GB) | CPU: 8 vCPUs 64GB",
        "GPU",
        16,
        8,
        64,
        gpu=1,
        accelerator="NVIDIA-V100",
        accelerator_memory="32GB",
        disk_gb=780,
    ),
    Flavor(
        "modelarts.vm.gpu.p100",
        "GPU: 1*NVIDIA-P100(16GB) | CPU: 8 vCPUs 64GB",
        "GPU",
        8,
        8,
        64,
        gpu=1,
        accelerator="NVIDIA-P100",
        accelerator_memory="16GB",
    ),
    Flavor(
        "modelarts.bm.snt9.xlarge.8",
        "Ascend: 8*Ascend-snt9(32GB) | ARM: 192 vCPUs 1536GB",
        "Ascend",
        16,
        192,
        1536,
        npu=8,
        accelerator="Ascend-snt9",
        accelerator_memory="32GB",
        cpu_arch="arm",
    ),
)


def _engine(
    engine_id: str, name: str, version: str, run_user: str, *, ascend: bool = False
) -> Engine:
    image = f"{PRESET_IMAGE_REPO}/{version}"
    return Engine(
        engine_id=engine_id,
        engine_name=name,
        engine_version=version,
        run_user=run_user,
        cpu_image_url=""
        if ascend
        else image.replace("cuda_10.2", "cpu").replace("cuda_10.1", "cpu"),
        gpu_image_url=image,
    )


ENGINES: tuple[Engine, ...] = (
    _engine(
        "pytorch-1.8.0", "PyTorch", "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64", "1102"
    ),
    _engine(
        "tensorflow-2.1.0",
        "TensorFlow",
        "tensorflow_2.1.0-cuda_10.1-py_3.7-ubuntu_18.04-x86_64",
        "1102",
    ),
    _engine(
        "horovod-0.22.1",
        "Horovod",
        "horovod_0.22.1-pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        "1102",
    ),
    _engine(
        "mpi-mindspore-1.3.0", "MPI", "mindspore_1.3.0-cuda_10.1-py_3.7-ubuntu_1804-x86_64", "1102"
    ),
    _engine(
        "ascend-mindspore-1.6.0",
        "Ascend-Powered-Engine",
        "mindspore_1.6.0-cann_5.0.3.6-py_3.7-euler_2.8.3-aarch64",
        "1000",
        ascend=True,
    ),
    _engine(
        "ascend-pytorch-2.1.0",
        "Ascend-Powered-Engine",
        "pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64",
        "1000",
        ascend=True,
    ),
)


def find_flavor(flavor_id: str) -> Flavor | None:
    return next((f for f in FLAVORS if f.flavor_id == flavor_id), None)


def find_engine(
    *, engine_id: str | None = None, name: str | None = None, version: str | None = None
) -> Engine | None:
    """By id, or by name and version (both as the service spells them)."""
    for engine in ENGINES:
        if engine_id is not None and engine.engine_id == engine_id:
            return engine
        if engine_id is None and engine.engine_name == name and engine.engine_version == version:
            return engine
    return None

"""``torch_npu.npu`` (also ``torch.npu``) of the CPU stand-in: one "device", which is the CPU.

Only what training scripts commonly call is here; anything else raises an AttributeError that says
the stand-in lacks it (the real package has it).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import torch

from . import amp

__all__ = [
    "amp",
    "current_device",
    "device",
    "device_count",
    "empty_cache",
    "get_device_name",
    "get_rng_state",
    "init",
    "initial_seed",
    "is_available",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "reset_peak_memory_stats",
    "seed",
    "set_device",
    "set_rng_state",
    "synchronize",
]


def is_available() -> bool:
    return True


def is_initialized() -> bool:
    return True


def init() -> None:
    return None


def device_count() -> int:
    return 1


def current_device() -> int:
    return 0


def set_device(device: Any) -> None:
    return None


def synchronize(device: Any = None) -> None:
    return None


def get_device_name(device: Any = None) -> str:
    return "CPU (majob torch_npu stand-in)"


@contextlib.contextmanager
def device(device: Any) -> Iterator[None]:
    yield


def manual_seed(seed: int) -> None:
    torch.manual_seed(seed)


def manual_seed_all(seed: int) -> None:
    torch.manual_seed(seed)


def seed() -> None:
    torch.seed()


def initial_seed() -> int:
    return torch.initial_seed()


def get_rng_state(device: Any = None) -> torch.Tensor:
    return torch.get_rng_state()


def set_rng_state(state: torch.Tensor, device: Any = None) -> None:
    torch.set_rng_state(state)


def empty_cache() -> None:
    return None


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def max_memory_reserved(device: Any = None) -> int:
    return 0


def reset_peak_memory_stats(device: Any = None) -> None:
    return None


def __getattr__(name: str) -> Any:
    raise AttributeError(
        f"torch_npu.npu.{name} is not provided by majob's CPU stand-in for torch_npu "
        "(it shims only common calls); the real torch_npu has it"
    )

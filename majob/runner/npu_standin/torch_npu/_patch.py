"""How the stand-in maps NPU onto the CPU: the mirror image of transfer_to_npu's cuda -> npu."""

from __future__ import annotations

import functools
import sys
import types
from collections.abc import Callable
from typing import Any

import torch
import torch.distributed as dist

BANNER = (
    "majob: torch_npu here is a CPU STAND-IN (npu -> cpu, hccl -> gloo, transfer_to_npu no-op); "
    "operator support, precision and performance are NOT verified"
)

# torch functions that take a device (transfer_to_npu wraps the same family for cuda -> npu).
_FACTORIES = (
    "arange", "as_tensor", "empty", "empty_like", "eye", "full", "full_like", "linspace",
    "load", "logspace", "ones", "ones_like", "rand", "rand_like", "randint", "randint_like",
    "randn", "randn_like", "randperm", "tensor", "zeros", "zeros_like",
)  # fmt: skip
_DEVICE_KEYWORDS = ("device", "map_location", "device_type")


def to_cpu(value: Any) -> Any:
    """An NPU device (string, ``torch.device``, map_location dict) as the CPU; others unchanged."""
    if isinstance(value, str):
        return "cpu" if value == "npu" or value.startswith("npu:") else value
    if isinstance(value, torch.device):
        return torch.device("cpu") if value.type == "npu" else value
    if isinstance(value, dict):
        return {to_cpu(k): to_cpu(v) for k, v in value.items()}
    return value


def _mapped(function: Callable[..., Any], *, positional: bool) -> Callable[..., Any]:
    @functools.wraps(function)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if positional:
            args = tuple(to_cpu(a) for a in args)
        for key in _DEVICE_KEYWORDS:
            if key in kwargs:
                kwargs[key] = to_cpu(kwargs[key])
        return function(*args, **kwargs)

    wrapper.__majob_standin__ = True  # type: ignore[attr-defined]
    return wrapper


def _gloo(backend: Any) -> Any:
    if isinstance(backend, str) and ("hccl" in backend.lower() or "nccl" in backend.lower()):
        return "gloo"
    return backend


def _init_process_group(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def init_process_group(*args: Any, **kwargs: Any) -> Any:
        if args:
            args = (_gloo(args[0]), *args[1:])
        if "backend" in kwargs:
            kwargs["backend"] = _gloo(kwargs["backend"])
        kwargs.pop("device_id", None)
        return original(*args, **kwargs)

    return init_process_group


def _ddp_init(original: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(original)
    def __init__(self: Any, module: Any, *args: Any, **kwargs: Any) -> None:
        # A CPU module takes no device_ids; the NPU ids of the original code mean "this rank".
        kwargs.pop("device_ids", None)
        kwargs.pop("output_device", None)
        args = tuple(None if i < 2 else a for i, a in enumerate(args))
        original(self, module, *args, **kwargs)

    return __init__


class _Autocast(torch.autocast):
    """``torch.autocast`` that reads ``npu`` as ``cpu``."""

    def __init__(self, device_type: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(to_cpu(device_type), *args, **kwargs)


class _GradScaler(torch.amp.GradScaler):
    """``torch.amp.GradScaler`` that reads ``npu`` as ``cpu``."""

    def __init__(self, device: str = "cpu", *args: Any, **kwargs: Any) -> None:
        super().__init__(to_cpu(device), *args, **kwargs)


def _device_class(real: type) -> type:
    class _DeviceMeta(type):
        def __instancecheck__(cls, instance: Any) -> bool:
            return isinstance(instance, real)

        def __subclasscheck__(cls, subclass: type) -> bool:
            return issubclass(subclass, real)

    class device(metaclass=_DeviceMeta):
        """``torch.device`` that builds the CPU device for ``npu`` / ``npu:N``."""

        def __new__(cls, *args: Any, **kwargs: Any) -> Any:
            if args and isinstance(args[0], str):
                args = (to_cpu(args[0]), *args[1:]) if args[0].startswith("npu") else args
                if args[0] == "cpu" and len(args) > 1:
                    args = ("cpu",)  # torch.device("npu", 1) -> cpu
            return real(*args, **kwargs)

    return device


def _tensor_npu(
    self: torch.Tensor, device: Any = None, non_blocking: bool = False, **_: Any
) -> Any:
    return self.to("cpu", non_blocking=non_blocking)


def _module_npu(self: torch.nn.Module, device: Any = None) -> torch.nn.Module:
    return self.cpu()


def install(npu_module: types.ModuleType) -> None:
    """Patch torch once per process (importing torch_npu twice is harmless)."""
    if getattr(torch, "__majob_npu_standin__", False):
        return
    # torch.device is a C type that cannot be subclassed and knows no "npu"; renaming the
    # PrivateUse1 backend to "npu" would make torch treat it as the accelerator (barrier() then
    # fails), so the constructor is replaced by a class that builds real (CPU) devices.
    namespace_device: Any = torch
    namespace_device.device = _device_class(torch.device)
    tensor: Any = torch.Tensor
    module: Any = torch.nn.Module
    tensor.to = _mapped(torch.Tensor.to, positional=True)
    module.to = _mapped(torch.nn.Module.to, positional=True)
    tensor.npu = _tensor_npu
    module.npu = _module_npu
    tensor.is_npu = property(lambda self: self.device.type == "cpu")
    namespace: Any = torch
    for name in _FACTORIES:
        setattr(namespace, name, _mapped(getattr(torch, name), positional=name == "load"))
    namespace.autocast = _Autocast
    amp: Any = torch.amp
    amp.GradScaler = _GradScaler
    distributed: Any = dist
    distributed.init_process_group = _init_process_group(dist.init_process_group)
    distributed.is_hccl_available = lambda: True
    ddp: Any = torch.nn.parallel.DistributedDataParallel
    ddp.__init__ = _ddp_init(ddp.__init__)
    namespace.npu = npu_module
    sys.modules["torch.npu"] = npu_module
    namespace.__majob_npu_standin__ = True

"""``torch_npu.npu.amp`` of the CPU stand-in: autocast is off (mixed precision is not exercised on
the CPU), the grad scaler passes values through."""

from __future__ import annotations

from typing import Any

import torch

__all__ = ["GradScaler", "autocast"]


class autocast(torch.autocast):
    def __init__(self, enabled: bool = True, dtype: Any = None, cache_enabled: bool = True) -> None:
        super().__init__("cpu", enabled=False)


class GradScaler(torch.amp.GradScaler):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("cpu", enabled=False)

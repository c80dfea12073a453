"""The two final checkpoints, tensor by tensor: max abs diff and cosine similarity."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class TensorDiff:
    name: str
    max_abs_diff: float
    cosine: float
    note: str = ""  # "only in A", "shape 3x3 vs 3x4"...


def _state_dict(path: Path) -> dict[str, Any]:
    import torch

    loaded = torch.load(path, map_location="cpu", weights_only=True)
    if isinstance(loaded, dict) and isinstance(loaded.get("model"), dict):
        loaded = loaded["model"]  # {"model": ..., "optimizer": ...} checkpoints
    if not isinstance(loaded, dict):
        return {}
    # DDP saves "module."-prefixed names: the same weights as a single process's.
    return {k.removeprefix("module."): v for k, v in loaded.items() if torch.is_tensor(v)}


def compare_checkpoints(a: Path, b: Path) -> list[TensorDiff]:
    import torch

    left, right = _state_dict(a), _state_dict(b)
    diffs: list[TensorDiff] = []
    for name in sorted(left.keys() | right.keys()):
        if name not in right or name not in left:
            side = "A" if name in left else "B"
            diffs.append(TensorDiff(name, float("nan"), float("nan"), f"only in {side}"))
            continue
        x, y = left[name].double().flatten(), right[name].double().flatten()
        if x.shape != y.shape:
            shapes = f"{tuple(left[name].shape)} vs {tuple(right[name].shape)}"
            diffs.append(TensorDiff(name, float("nan"), float("nan"), f"shape {shapes}"))
            continue
        if x.numel() == 0:
            diffs.append(TensorDiff(name, 0.0, 1.0))
            continue
        cosine = torch.nn.functional.cosine_similarity(x, y, dim=0, eps=1e-12).item()
        diffs.append(TensorDiff(name, (x - y).abs().max().item(), cosine))
    return diffs

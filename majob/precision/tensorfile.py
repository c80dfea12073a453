"""A tensor a msprobe ``tensor`` dump saved (``dump_tensor_data/<name>.npy`` or ``.pt``): does it
hold NaN or Inf? Read only for an entry of ``dump.json`` without statistics."""

from __future__ import annotations

from pathlib import Path


def nonfinite_in(path: Path) -> str | None:
    """``nan``, ``inf`` or ``-inf`` when the saved tensor holds one (NaN first), else None;
    None too for a file that is missing or cannot be read (the statistics decide then)."""
    import numpy as np

    try:
        if path.suffix == ".npy":
            array = np.load(path, allow_pickle=False)
        elif path.suffix == ".pt":
            import torch

            tensor = torch.load(path, map_location="cpu", weights_only=True)
            if not isinstance(tensor, torch.Tensor):
                return None
            array = tensor.detach().float().numpy()
        else:
            return None
    except (OSError, ValueError, RuntimeError, ImportError):
        return None
    if not np.issubdtype(array.dtype, np.floating) and not np.issubdtype(
        array.dtype, np.complexfloating
    ):
        return None
    if np.isnan(array).any():
        return "nan"
    if np.isposinf(array).any():
        return "inf"
    return "-inf" if np.isneginf(array).any() else None

"""The node half of ``--dump grad``: per-step, per-parameter gradient statistics and directions.

msprobe's PyTorch gradient monitor (``grad_probe``) is not in mindstudio-probe 26.2.0 (its
PyTorch tasks are tensor, statistics, acc_check, structure, diff_check and nan_check), so the
bootstrap records with torch itself, in grad_probe's file layout, under the dump dir:

- ``grad/rank<R>/grad_summary_<step>.csv``: one row per parameter, grad_probe's L2 columns
  (``param_name``, the share of values in each bucket of ``bounds``, ``=0`` the share of
  zeros, ``max``, ``min``, ``norm``, ``shape``) and majob's ``mean``;
- ``grad/rank<R>/signs_<step>.npy``: the directions, ``grad > 0`` (grad_probe's own direction
  data), of every row in the CSV's order, concatenated and packed 8 to a byte
  (``numpy.packbits(..., bitorder="little")``) in one file per step, where grad_probe writes a
  bool ``step<step>/<param_name>.npy`` per parameter: a file per parameter cost about 2x the
  step time of a small model on this machine, one file per step does not.

Read in the optimizer step post hook (``bootstrap.py``), after msprobe's dump of the step has
stopped (its hooks would otherwise dump these reductions as the script's APIs): the gradients
the optimizer stepped with. A step's CSV is written last, by a rename: a step without its CSV
was cut short. Standard library only at import (the node may run another interpreter); torch
and numpy are imported when the first step is recorded. Loaded from beside the bootstrap.
"""

from __future__ import annotations

import csv
import fnmatch
import io
import itertools
import math
import os

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

GRAD_DIR = "grad"
SUMMARY = "grad_summary_{step}.csv"
SIGNS = "signs_{step}.npy"  # the step's directions: every row's grad > 0, 8 to a byte
STAT_COLUMNS = ("max", "min", "norm", "shape", "mean")
WRAPPERS = ("module.", "_orig_mod.")  # DDP's and torch.compile's prefixes, left out of names


def bucket_headers(bounds: list[float]) -> list[str]:
    """grad_probe's distribution columns: ``(-inf, b0]``, ``(b0, b1]``... ``(bn, inf)``, ``=0``."""
    heads = [f"(-inf, {bounds[0]:g}]"]
    heads += [f"({low:g}, {high:g}]" for low, high in itertools.pairwise(bounds)]
    return [*heads, f"({bounds[-1]:g}, inf)", "=0"]


def plain_name(name: str) -> str:
    """``module.fc1.weight`` (DDP) and ``_orig_mod.fc1.weight`` (compiled) as ``fc1.weight``."""
    stripped = True
    while stripped:
        stripped = False
        for prefix in WRAPPERS:
            if name.startswith(prefix):
                name, stripped = name[len(prefix) :], True
    return name


def selected(name: str, layers: list[str]) -> bool:
    """Whether ``layers`` (names or glob patterns; empty: all) pick parameter ``name``: a
    module's name picks its parameters (``fc1`` picks ``fc1.weight`` and ``fc1.bias``)."""
    if not layers:
        return True
    return any(
        name == pattern or name.startswith(pattern + ".") or fnmatch.fnmatchcase(name, pattern)
        for pattern in layers
    )


class GradRecorder:
    """Records the chosen parameters' gradients at the chosen steps into ``dump_dir``."""

    def __init__(self, settings: dict[str, Any], dump_dir: str, rank: str) -> None:
        self.steps = {int(step) for step in settings["steps"]}
        self.layers = [str(layer) for layer in settings.get("layers", [])]
        self.bounds = [float(bound) for bound in settings["bounds"]]
        self.out = os.path.join(dump_dir, GRAD_DIR, f"rank{rank}")
        self.params: list[tuple[str, Any]] = []
        self.recorded: set[int] = set()

    def watch(self, model: Any) -> None:
        """The model's parameters the layer patterns pick, in the model's order."""
        seen: set[int] = set()
        for name, param in model.named_parameters():
            short = plain_name(name)
            if id(param) not in seen and selected(short, self.layers):
                seen.add(id(param))
                self.params.append((short, param))

    def wants(self, step: int) -> bool:
        return bool(self.params) and step in self.steps and step not in self.recorded

    def record(self, step: int) -> None:
        """One step's statistics and directions (a step is recorded once: the first optimizer
        that steps it)."""
        if not self.wants(step):
            return
        self.recorded.add(step)
        import numpy
        import torch

        os.makedirs(self.out, exist_ok=True)
        with torch.no_grad():
            present = []
            for name, param in self.params:
                grad = getattr(param, "main_grad", None)
                grad = param.grad if grad is None else grad
                if grad is not None:  # None: not trained this step (frozen, or unused)
                    present.append((name, grad.detach()))
            if not present:
                return
            # one transfer from the device; the statistics in numpy, on views of it
            flat = torch.cat([grad.reshape(-1).float() for _, grad in present]).cpu().numpy()
        sizes = [grad.numel() for _, grad in present]
        numbers = _statistics(numpy, flat, sizes, self.bounds)
        signs = numpy.packbits(flat > 0, bitorder="little")
        numpy.save(os.path.join(self.out, SIGNS.format(step=step)), signs, allow_pickle=False)
        text = io.StringIO()
        writer = csv.writer(text, lineterminator="\n")
        writer.writerow(["param_name", *bucket_headers(self.bounds), *STAT_COLUMNS])
        for (name, grad), row in zip(present, numbers, strict=True):
            shares, (top, bottom, norm, mean) = row[:-4], row[-4:]
            writer.writerow(
                [
                    name,
                    *(f"{v:.6g}" for v in shares),
                    repr(top),
                    repr(bottom),
                    repr(norm),
                    list(grad.shape),
                    repr(mean),
                ]
            )
        path = os.path.join(self.out, SUMMARY.format(step=step))
        with open(path + ".part", "w", encoding="utf-8") as handle:
            handle.write(text.getvalue())
        os.replace(path + ".part", path)  # the summary last: a step without it was cut short


def _statistics(numpy: Any, flat: Any, sizes: list[int], bounds: list[float]) -> list[list[float]]:
    """Per parameter (``sizes``: each one's share of ``flat``, a float32 array, in order): the
    bucket shares, the share of zeros, max, min, norm and mean. numpy counts ``value <= bound``
    per bound (a SIMD compare and a count each) about 6x faster than torch's compare and sum
    on CPU, and its reductions on views of the one array cost no copy."""
    rows: list[list[float]] = []
    offset = 0
    for size in sizes:
        values = flat[offset : offset + size]
        offset += size
        if not size:
            rows.append([math.nan] * (len(bounds) + 6))
            continue
        cumulative = [numpy.count_nonzero(values <= bound) for bound in bounds] + [size]
        buckets = [cumulative[0], *(b - a for a, b in itertools.pairwise(cumulative))]
        top, bottom = float(values.max()), float(values.min())
        rows.append(
            [
                *(int(n) / size for n in buckets),
                numpy.count_nonzero(values == 0) / size,
                top,
                bottom,
                _norm(numpy, values, max(abs(top), abs(bottom))),
                float(values.sum()) / size,  # numpy's pairwise sum: float32 holds up
            ]
        )
    return rows


def _norm(numpy: Any, values: Any, largest: float) -> float:
    """The L2 norm: a float32 dot product (BLAS), in float64 where the sum of squares could
    overflow float32 (values from 1e15 up, summed over many elements) or the squares lose the
    smallest values (from 1e-15 down)."""
    if 1e-15 < largest < 1e15 or largest == 0 or not math.isfinite(largest):
        return math.sqrt(float(numpy.dot(values, values)))
    wide = values.astype(numpy.float64)
    return math.sqrt(float(numpy.dot(wide, wide)))

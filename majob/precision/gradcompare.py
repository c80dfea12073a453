"""``majob compare``'s gradients: where the two runs' gradient directions part.

Each side's ``grad/rank<R>/`` (``gradprobe.py``: ``grad_summary_<step>.csv`` and the packed
signs ``signs_<step>.npy``) is read; for every parameter and step both recorded, the
**cosine similarity of the two sign vectors** (each gradient as +1 where it is positive, -1
elsewhere: ``2 * agreement - 1``, 1.0 when every sign agrees) and the two norms. The first
step with a parameter below the threshold (``--grad-cosine``, 0.99) names the diverging
layers, in the model's order; a norm beyond ``--grad-norm-rtol`` (a scaled loss keeps the
directions) is reported too. Ranks are paired by number and the lowest similarity is kept.

Bad input is refused, one line each, before any number is shown: one side without gradients,
different models (parameter names or shapes), different steps, a dump cut short (a summary
line or a direction file missing), gradients that are NaN/Inf from the first step.
"""

from __future__ import annotations

import csv
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majob.errors import UserInputError
from majob.precision.gradprobe import GRAD_DIR, SIGNS, SUMMARY

RERUN = "record both runs the same way: `majob run SPEC --dump grad` (or `majob submit`)"


@dataclass(frozen=True)
class GradRow:
    """One parameter's gradient at one step, as the summary CSV has it."""

    name: str
    norm: float
    max: float
    min: float
    mean: float
    zeros: float
    shape: tuple[int, ...]

    @property
    def finite(self) -> bool:
        return all(math.isfinite(v) for v in (self.norm, self.max, self.min))


@dataclass(frozen=True)
class RankGrads:
    """One rank's recorded gradients: its dir (the direction files) and rows per step."""

    dir: Path
    steps: dict[int, list[GradRow]]


Grads = dict[str, RankGrads]  # by rank dir name


@dataclass(frozen=True)
class GradCell:
    layer: str
    step: int
    cosine: float  # NaN: a side's gradient is not finite there
    norm_a: float
    norm_b: float


@dataclass
class GradComparison:
    layers: tuple[str, ...]
    steps: tuple[int, ...]
    ranks: tuple[str, ...]
    cosine_threshold: float
    norm_rtol: float
    cells: dict[tuple[str, int], GradCell] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)

    def cell(self, layer: str, step: int) -> GradCell | None:
        return self.cells.get((layer, step))

    def parted(self, cell: GradCell) -> bool:
        return not cell.cosine >= self.cosine_threshold  # NaN parts too

    def norm_parted(self, cell: GradCell) -> bool:
        a, b = cell.norm_a, cell.norm_b
        return not abs(a - b) <= self.norm_rtol * max(abs(a), 1e-30)

    @property
    def first_diverging(self) -> tuple[int, tuple[str, ...]] | None:
        """The first step where a direction parts, and every layer parted there."""
        for step in self.steps:
            layers = tuple(
                layer
                for layer in self.layers
                if (cell := self.cell(layer, step)) is not None and self.parted(cell)
            )
            if layers:
                return step, layers
        return None

    @property
    def first_norm(self) -> GradCell | None:
        """The first (step, then layer) whose norms differ beyond ``norm_rtol``."""
        for step in self.steps:
            for layer in self.layers:
                cell = self.cell(layer, step)
                if cell is not None and self.norm_parted(cell):
                    return cell
        return None

    @property
    def problems(self) -> list[str]:
        found: list[str] = []
        first = self.first_diverging
        if first is not None:
            step, layers = first
            cell = self.cells[(layers[0], step)]
            shown = ", ".join(layers[:5]) + (
                f" and {len(layers) - 5} more" if len(layers) > 5 else ""
            )
            found.append(
                f"gradient directions part at step {step}: {shown} "
                f"(cosine {_shown(cell.cosine)} < {self.cosine_threshold:g})"
            )
        norm = self.first_norm
        if norm is not None:
            found.append(
                f"gradient norms differ from step {norm.step}: {norm.layer} "
                f"(A {norm.norm_a:.6g}, B {norm.norm_b:.6g}; rtol {self.norm_rtol:g})"
            )
        return found

    def summary_lines(self) -> list[str]:
        """The console's lines: what was compared, then where it parts (or that it does not)."""
        head = (
            f"gradients: {len(self.layers)} parameters x {len(self.steps)} steps "
            f"({', '.join(map(str, self.steps))}), {len(self.ranks)} rank(s); "
            f"direction cosine threshold {self.cosine_threshold:g}"
        )
        lines = [head]
        if not self.problems:
            worst = min((c.cosine for c in self.cells.values()), default=1.0)
            lines.append(f"gradients: the same directions and norms (lowest cosine {worst:.6f})")
        return lines + [f"note: {note}" for note in self.notes]

    def to_json(self) -> dict[str, Any]:
        first = self.first_diverging
        norm = self.first_norm
        return {
            "cosine_threshold": self.cosine_threshold,
            "norm_rtol": self.norm_rtol,
            "steps": list(self.steps),
            "ranks": list(self.ranks),
            "layers": [
                {
                    "name": layer,
                    "cosine": [_number(self.cells[(layer, s)].cosine) for s in self.steps],
                    "norm_a": [_number(self.cells[(layer, s)].norm_a) for s in self.steps],
                    "norm_b": [_number(self.cells[(layer, s)].norm_b) for s in self.steps],
                }
                for layer in self.layers
            ],
            "first_diverging": None
            if first is None
            else {"step": first[0], "layers": list(first[1])},
            "first_norm_difference": None
            if norm is None
            else {"step": norm.step, "layer": norm.layer, "a": norm.norm_a, "b": norm.norm_b},
            "notes": self.notes,
        }


def _number(value: float) -> float | None:
    return value if math.isfinite(value) else None


def _shown(value: float) -> str:
    return f"{value:.4f}" if math.isfinite(value) else "NaN/Inf"


# -- reading ----------------------------------------------------------------------------------


def read_grads(dump_dir: Path | None, label: str) -> Grads | None:
    """``label``'s gradients, None when its dump has none; a dump cut short is an error."""
    root = None if dump_dir is None else dump_dir / GRAD_DIR
    if root is None or not root.is_dir():
        return None
    grads: Grads = {}
    for rank_dir in sorted(p for p in root.glob("rank*") if p.is_dir()):
        steps: dict[int, list[GradRow]] = {}
        for signs in rank_dir.glob(SIGNS.format(step="*")):
            step = signs.stem.rsplit("_", 1)[-1]
            summary = rank_dir / SUMMARY.format(step=step)
            if step.isdigit() and not summary.is_file():
                _cut_short(label, f"{rank_dir.name}/{signs.name} has no {summary.name}")
        for summary in rank_dir.glob(SUMMARY.format(step="*")):
            step = summary.stem.rsplit("_", 1)[-1]
            if step.isdigit():
                steps[int(step)] = _read_summary(summary, label)
        if steps:
            grads[rank_dir.name] = RankGrads(rank_dir, dict(sorted(steps.items())))
    if not grads:
        _cut_short(label, f"{root.name}/ holds no grad_summary_<step>.csv")
    return grads


def _cut_short(label: str, what: str) -> None:
    raise UserInputError(
        f"{label}: its gradient dump is cut short ({what}): a killed run?",
        hint="run it again with --dump grad",
    )


def _read_summary(path: Path, label: str) -> list[GradRow]:
    text = path.read_text(encoding="utf-8", errors="replace")
    lines = list(csv.reader(text.splitlines()))
    if not lines or lines[0][:1] != ["param_name"] or "norm" not in lines[0]:
        _cut_short(label, f"{path.parent.name}/{path.name} has no header")
    header = lines[0]
    at = {name: header.index(name) for name in ("norm", "max", "min", "mean", "=0", "shape")}
    rows: list[GradRow] = []
    for number, line in enumerate(lines[1:], start=2):
        try:
            last = number == len(lines)
            if len(line) != len(header) or (last and not text.endswith("\n")):
                raise ValueError("incomplete")
            numbers = [float(line[at[k]]) for k in ("norm", "max", "min", "mean", "=0")]
            shape = tuple(int(n) for n in json.loads(line[at["shape"]]))
        except (ValueError, TypeError):
            _cut_short(label, f"{path.parent.name}/{path.name} line {number} is incomplete")
        norm, top, bottom, mean, zeros = numbers
        rows.append(GradRow(line[0], norm, top, bottom, mean, zeros, shape))
    return rows


# -- comparing --------------------------------------------------------------------------------

Pair = tuple[str, RankGrads, RankGrads]


def compare_grads(
    golden: Path | None, target: Path | None, cosine: float = 0.99, norm_rtol: float = 0.01
) -> GradComparison | None:
    """Both dumps' gradients compared; None when neither has any."""
    a, b = read_grads(golden, "A"), read_grads(target, "B")
    if a is None and b is None:
        return None
    if a is None or b is None:
        has, lacks = ("B", "A") if a is None else ("A", "B")
        raise UserInputError(
            f"{has} has gradients (--dump grad) and {lacks} has none: nothing to compare them with",
            hint=RERUN,
        )
    pairs, notes = _pair_ranks(a, b)
    steps = _same_steps(pairs)
    layers = _same_layers(pairs, steps)
    _finite_first_step(pairs, steps[0])
    result = GradComparison(layers, steps, tuple(p[0] for p in pairs), cosine, norm_rtol)
    result.notes = notes
    for _, side_a, side_b in pairs:
        for step in steps:
            signs_a, signs_b = _signs(side_a, step, "A"), _signs(side_b, step, "B")
            rows_b = {row.name: row for row in side_b.steps[step]}
            for row in side_a.steps[step]:
                other = rows_b[row.name]
                finite = row.finite and other.finite
                value = _cosine(signs_a[row.name], signs_b[row.name]) if finite else math.nan
                old = result.cells.get((row.name, step))
                if old is None or not value >= old.cosine:  # the lowest over the ranks
                    result.cells[(row.name, step)] = GradCell(
                        row.name, step, value, row.norm, other.norm
                    )
    return result


def _pair_ranks(a: Grads, b: Grads) -> tuple[list[Pair], list[str]]:
    """Ranks paired by name (``rank0`` with ``rank0``); the ones one side lacks are a note."""
    common = [rank for rank in a if rank in b]
    notes = []
    if set(a) != set(b):
        notes.append(
            f"gradients: A recorded {', '.join(a)}, B {', '.join(b)}; "
            f"compared {', '.join(common) or 'none'}"
        )
    if not common:
        raise UserInputError(
            "the two gradient dumps have no rank in common", hint="record the same ranks in both"
        )
    return [(rank, a[rank], b[rank]) for rank in common], notes


def _same_steps(pairs: list[Pair]) -> tuple[int, ...]:
    for rank, side_a, side_b in pairs:
        steps_a, steps_b = tuple(side_a.steps), tuple(side_b.steps)
        if steps_a != steps_b:
            shorter = "A" if len(steps_a) < len(steps_b) else "B"
            prefix = (
                min(steps_a, steps_b, key=len)
                == max(steps_a, steps_b, key=len)[: min(len(steps_a), len(steps_b))]
            )
            why = f" ({shorter} stopped early: a killed run?)" if prefix else ""
            raise UserInputError(
                f"the runs recorded gradients of different steps ({rank}): A {_steps(steps_a)}, "
                f"B {_steps(steps_b)}{why}",
                hint="record the same steps in both (precision.grad.steps)",
            )
    return tuple(pairs[0][1].steps)


def _steps(steps: tuple[int, ...]) -> str:
    return ", ".join(map(str, steps)) or "none"


def _same_layers(pairs: list[Pair], steps: tuple[int, ...]) -> tuple[str, ...]:
    """The parameters, in A's order; different names or shapes are different models."""
    for rank, side_a, side_b in pairs:
        for step in steps:
            rows_a, rows_b = side_a.steps[step], side_b.steps[step]
            shapes_a = {row.name: row.shape for row in rows_a}
            shapes_b = {row.name: row.shape for row in rows_b}
            only = [(n, "A") for n in shapes_a if n not in shapes_b]
            only += [(n, "B") for n in shapes_b if n not in shapes_a]
            if only:
                name, side = only[0]
                raise UserInputError(
                    f"the runs do not train the same model: parameter {name} has a gradient "
                    f"in {side} only at step {step} ({rank}; {len(only)} parameter(s) differ)",
                    hint="compare a run with its own migration (same model, same "
                    "precision.grad.layers)",
                )
            for name, shape in shapes_a.items():
                if shapes_b[name] != shape:
                    raise UserInputError(
                        f"the runs do not train the same model: {name} is {list(shape)} in A, "
                        f"{list(shapes_b[name])} in B",
                        hint="compare a run with its own migration (same model)",
                    )
    return tuple(row.name for row in pairs[0][1].steps[steps[0]])


def _finite_first_step(pairs: list[Pair], step: int) -> None:
    """Gradients NaN/Inf from the first step: their directions say nothing."""
    for rank, side_a, side_b in pairs:
        for label, side in (("A", side_a), ("B", side_b)):
            bad = [row.name for row in side.steps[step] if not row.finite]
            if bad:
                raise UserInputError(
                    f"{label}'s gradients are NaN/Inf from its first recorded step {step} "
                    f"({bad[0]}, {rank}; {len(bad)} of {len(side.steps[step])} parameters): "
                    "there is no direction to compare",
                    hint="find where the NaN starts first (the loss, the inputs, the learning "
                    "rate), then compare again",
                )


def _signs(side: RankGrads, step: int, label: str) -> dict[str, Any]:
    """Each row's signs at ``step``, from the step's packed file (the rows' order, sizes)."""
    import numpy

    rows = side.steps[step]
    sizes = [math.prod(row.shape) for row in rows]
    path = side.dir / SIGNS.format(step=step)
    try:
        packed = numpy.load(path, allow_pickle=False)
        if packed.dtype != numpy.uint8 or packed.size * 8 < sum(sizes):
            raise ValueError("short")
    except (OSError, ValueError, EOFError):
        _cut_short(label, f"{side.dir.name}/{path.name} is missing or cut short")
    bits = numpy.unpackbits(packed, count=sum(sizes), bitorder="little")
    offsets = numpy.cumsum([0, *sizes])
    return {row.name: bits[offsets[i] : offsets[i + 1]] for i, row in enumerate(rows)}


def _cosine(a: Any, b: Any) -> float:
    """The cosine of two sign vectors (+1 positive, -1 else): ``2 * agreement - 1``."""
    import numpy

    if not a.size:
        return 1.0
    agree = int(numpy.count_nonzero(a == b))
    return 2.0 * agree / int(a.size) - 1.0

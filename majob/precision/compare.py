"""``majob compare A B``: msprobe's compare per step and rank, summarised for a person.

A is the golden (reference) run, B the target (the migrated one), as in msprobe's ``-gp``/``-tp``.
For each step both dumped and each rank (paired by rank, or by order for ``proc<PID>`` dirs) the
rows of msprobe's CSV are counted (pass/warning/error, and how many of B's APIs found a match in
A), and the first row in execution order whose result is not ``pass`` is kept with the line of
the user's own file in its stack. Then the loss curves and the final checkpoints.
"""

from __future__ import annotations

import csv
import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import UserInputError
from majob.precision.checkpoints import TensorDiff, compare_checkpoints
from majob.precision.config_table import ConfigTable, config_table
from majob.precision.gradcompare import GradComparison, compare_grads
from majob.precision.series import SeriesComparison, compare_series, read_loss
from majob.precision.sources import RunDump
from majob.precision.specs import read_spec_record, spec_differences
from majob.text import counted

if TYPE_CHECKING:
    from majob.precision.nonfinite import NonFiniteScan

RESULTS = ("pass", "warning", "error")
_PHASE = re.compile(r"^(.*?\.(?:forward|backward))(?:\.|$)")
MIN_MATCHED = 0.5  # below this share of matched APIs the runs are not the same model


@dataclass(frozen=True)
class ApiRow:
    """One row of msprobe's result: an input or output of one API call."""

    step: int
    rank: str
    name: str  # e.g. Functional.linear.1.forward.output.0
    api: str  # e.g. Functional.linear.1.forward
    result: str
    max_diff: str
    message: str
    where: str  # "train.py:28 in forward", the user's frame in the stack ("" when none)


@dataclass(frozen=True)
class PairResult:
    step: int
    rank: str
    counts: dict[str, int]
    matched: int
    total: int
    first_bad: ApiRow | None
    worst: tuple[ApiRow, ...]
    csv_path: Path


@dataclass
class Tolerances:
    loss_rtol: float = 1e-4
    loss_atol: float = 1e-6
    weight_atol: float = 1e-4
    grad_cosine: float = 0.99  # gradients: direction cosine below this parts (gradcompare.py)
    grad_norm_rtol: float = 0.01


@dataclass
class CompareReport:
    golden: str
    target: str
    pairs: list[PairResult] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)  # partial dumps, unpaired ranks
    loss: SeriesComparison | None = None
    weights: list[TensorDiff] = field(default_factory=list)
    weights_files: tuple[str, str] | None = None
    tolerances: Tolerances = field(default_factory=Tolerances)
    nonfinite: tuple[NonFiniteScan, NonFiniteScan] | None = None  # A's, B's first NaN/Inf
    # (field, A, B) where the two runs' specs differ; None when a dump did not keep its spec
    spec_differences: list[tuple[str, str, str]] | None = None
    config: ConfigTable | None = None  # what went in: spec, packages, data... (config_table.py)
    grad: GradComparison | None = None  # with --dump grad on both sides (gradcompare.py)

    @property
    def counts(self) -> dict[str, int]:
        total: Counter[str] = Counter()
        for pair in self.pairs:
            total.update(pair.counts)
        return {key: total.get(key, 0) for key in (*RESULTS, "unmatched")}

    @property
    def first_bad(self) -> ApiRow | None:
        """The first non-pass API of the earliest step (lowest rank first)."""
        bad = [p.first_bad for p in self.pairs if p.first_bad is not None]
        return min(bad, key=lambda r: (r.step, _rank_key(r.rank)), default=None)

    @property
    def worst_weight(self) -> TensorDiff | None:
        return max(self.weights, key=lambda d: _nan_high(d.max_abs_diff), default=None)

    @property
    def problems(self) -> list[str]:
        """Why the runs do not train the same (empty: they do, within the tolerances)."""
        from majob.precision.nonfinite import compare_problems

        found = [] if self.nonfinite is None else compare_problems(*self.nonfinite)
        counts = self.counts
        if counts["error"] or counts["warning"] or counts["unmatched"]:
            found.append(
                f"APIs: {counts['error']} error, {counts['warning']} warning, "
                f"{counts['unmatched']} unmatched"
            )
        if self.loss is not None and self.loss.first_beyond is not None:
            found.append(f"loss differs from step {self.loss.first_beyond}")
        if self.loss is not None and len(self.loss.a) != len(self.loss.b):
            found.append(f"loss has {len(self.loss.a)} steps in A, {len(self.loss.b)} in B")
        worst = self.worst_weight
        if worst is not None and not worst.max_abs_diff <= self.tolerances.weight_atol:
            found.append(f"final weights differ ({worst.name}: {worst.note or worst.max_abs_diff})")
        return found + (self.grad.problems if self.grad is not None else [])

    @property
    def verdict(self) -> str:
        return "pass" if not self.problems else "fail"

    def _repr_html_(self) -> str:
        from majob.precision.config_table import report_card

        return report_card(self)


def _nan_high(value: float) -> float:
    return float("inf") if value != value else value


def _rank_key(rank: str) -> tuple[int, str]:
    digits = re.sub(r"\D", "", rank)
    return (int(digits) if digits and rank.startswith("rank") else 1 << 30, rank)


def _step_dirs(dump_dir: Path) -> dict[int, dict[str, Path]]:
    """``{step: {rank dir name: dir}}`` of a dump."""
    steps: dict[int, dict[str, Path]] = {}
    for step_dir in dump_dir.glob("step*"):
        if step_dir.is_dir() and step_dir.name[4:].isdigit():
            ranks = {p.name: p for p in step_dir.iterdir() if p.is_dir()}
            steps[int(step_dir.name[4:])] = ranks
    return steps


def _complete(rank_dir: Path) -> bool:
    """A dump msprobe finished writing: its ``dump.json`` parses and has data."""
    try:
        data = json.loads((rank_dir / "dump.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and bool(data.get("data"))


def pairs_to_compare(
    golden: Path, target: Path
) -> tuple[list[tuple[int, str, Path, Path]], list[str]]:
    """``(step, rank, golden dir, target dir)`` for every step both dumped, ranks paired by name
    (``rank<N>``) or else by order; and the lines saying what was left out and why."""
    a, b = _step_dirs(golden), _step_dirs(target)
    pairs: list[tuple[int, str, Path, Path]] = []
    skipped: list[str] = []
    for step in sorted(a.keys() & b.keys()):
        left = sorted(a[step], key=_rank_key)
        right = sorted(b[step], key=_rank_key)
        if all(n.startswith("rank") for n in (*left, *right)):
            names = [(n, n) for n in left if n in right]
        else:
            names = list(zip(left, right, strict=False))
        if len(left) != len(right):
            skipped.append(
                f"step {step}: A dumped {counted(len(left), 'rank')}, B {len(right)}; "
                f"compared {len(names)}"
            )
        for golden_name, target_name in names:
            g, t = a[step][golden_name], b[step][target_name]
            partial = [label for label, d in (("A", g), ("B", t)) if not _complete(d)]
            if partial:
                skipped.append(
                    f"step {step} {target_name}: {' and '.join(partial)}'s dump.json is missing "
                    "or cut short (a crashed run?); not compared"
                )
                continue
            pairs.append((step, target_name, g, t))
    return pairs, skipped


def summarise_csv(path: Path, step: int, rank: str, worst: int = 5) -> PairResult:
    """Counts, matches, the first non-pass row and the ``worst`` rows by max diff."""
    from majob.precision.frames import user_frame as _user_frame

    counts: Counter[str] = Counter()
    first_bad: ApiRow | None = None
    rows: list[ApiRow] = []
    stacks: dict[str, str] = {}
    matched = total = 0
    with path.open(encoding="utf-8", newline="") as handle:
        for record in csv.DictReader(handle):
            name = record.get("NPU Name", "")
            match = _PHASE.match(name)
            api = match.group(1) if match else name
            # msprobe keeps a stack for the forward call only; its backward has the same line.
            call = api.rsplit(".", 1)[0]
            stack = record.get("NPU_Stack_Info", "N/A")
            if stack not in ("", "N/A"):
                stacks[call] = _user_frame(stack)
            total += 1
            if record.get("Bench Name", "N/A") == "N/A":
                counts["unmatched"] += 1
                result = "unmatched"
            else:
                matched += 1
                result = record.get("Result", "").strip().lower()
                if result in RESULTS:
                    counts[result] += 1
            row = ApiRow(
                step,
                rank,
                name,
                api,
                result,
                record.get("Max diff", ""),
                record.get("Err_message", ""),
                stacks.get(call, ""),
            )
            if result != "pass":
                rows.append(row)
                if first_bad is None:
                    first_bad = row
    ranked = sorted(rows, key=lambda r: -_as_float(r.max_diff))[:worst]
    return PairResult(
        step, rank, dict(counts), matched, total, first_bad, tuple(ranked), csv_path=path
    )


def _as_float(text: str) -> float:
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        return 0.0
    return value if value == value else float("inf")


def compare_runs(
    golden: RunDump,
    target: RunDump,
    output_dir: Path,
    tolerances: Tolerances | None = None,
) -> CompareReport:
    """Everything ``majob compare`` reports; msprobe's CSVs go under ``output_dir``."""
    from majob.precision.probe import compare_pair

    report = CompareReport(golden.label, target.label, tolerances=tolerances or Tolerances())
    golden_dump, target_dump = golden.dump_dir, target.dump_dir
    if golden_dump is None or target_dump is None:
        missing = [run.label for run in (golden, target) if run.dump_dir is None]
        raise UserInputError(
            f"{' and '.join(missing)}: no dump there (no precision-dump/ with step* dirs)",
            hint="run with --dump: `majob run SPEC --dump` (or `majob submit SPEC --dump`)",
        )
    spec_a, spec_b = read_spec_record(golden_dump), read_spec_record(target_dump)
    if spec_a is not None and spec_b is not None:
        report.spec_differences = spec_differences(spec_a, spec_b)
    report.config = config_table((golden_dump, target_dump), (golden.run_dir, target.run_dir))
    tol = report.tolerances  # the gradients' bad input is refused before msprobe's compare
    report.grad = compare_grads(golden_dump, target_dump, tol.grad_cosine, tol.grad_norm_rtol)
    pairs, report.skipped = pairs_to_compare(golden_dump, target_dump)
    if not pairs and not (_step_dirs(golden_dump) and _step_dirs(target_dump)):
        report.skipped.append("no msprobe step dirs in one of the dumps: APIs not compared")
    elif not pairs:
        why = "; ".join(report.skipped) or "the two dumps have no step in common"
        raise UserInputError(f"nothing to compare: {why}", hint="dump the same steps in both")
    for step, rank, g, t in pairs:
        csv_path = compare_pair(t / "dump.json", g / "dump.json", output_dir / f"step{step}-{rank}")
        result = summarise_csv(csv_path, step, rank)
        if result.total and result.matched / result.total < MIN_MATCHED:
            raise UserInputError(
                f"the runs do not run the same model: only {result.matched} of {result.total} "
                f"API inputs/outputs of B matched A at step {step} ({rank})",
                hint="compare a run with its own migration (same model, same steps)",
            )
        report.pairs.append(result)
    from majob.precision.nonfinite import scan

    report.nonfinite = (scan(golden_dump), scan(target_dump))  # the first NaN/Inf of each
    loss_a, source_a = read_loss(golden)
    loss_b, source_b = read_loss(target)
    if loss_a and loss_b:
        tol = report.tolerances
        report.loss = compare_series(
            loss_a, loss_b, rtol=tol.loss_rtol, atol=tol.loss_atol, sources=(source_a, source_b)
        )
    ckpt_a, ckpt_b = golden.checkpoint(), target.checkpoint()
    if ckpt_a is not None and ckpt_b is not None:
        report.weights = compare_checkpoints(ckpt_a, ckpt_b)
        report.weights_files = (str(ckpt_a), str(ckpt_b))
    return report


def to_json(report: CompareReport) -> dict[str, object]:
    first = report.first_bad
    loss = report.loss
    return {
        "golden": report.golden,
        "target": report.target,
        "verdict": report.verdict,
        "problems": report.problems,
        "spec_differences": None
        if report.spec_differences is None
        else [{"field": f, "golden": a, "target": b} for f, a, b in report.spec_differences],
        "configuration": None if report.config is None else report.config.to_json(),
        "gradients": None if report.grad is None else report.grad.to_json(),
        "counts": report.counts,
        "first_bad_api": None
        if first is None
        else {
            "step": first.step,
            "rank": first.rank,
            "api": first.api,
            "name": first.name,
            "result": first.result,
            "max_diff": first.max_diff,
            "where": first.where,
        },
        "pairs": [
            {
                "step": p.step,
                "rank": p.rank,
                "counts": p.counts,
                "matched": p.matched,
                "total": p.total,
                "csv": str(p.csv_path),
            }
            for p in report.pairs
        ],
        "skipped": report.skipped,
        "nonfinite": None
        if report.nonfinite is None
        else {"golden": report.nonfinite[0].to_json(), "target": report.nonfinite[1].to_json()},
        "loss": None
        if loss is None
        else {
            "golden": list(loss.a),
            "target": list(loss.b),
            "sources": [loss.source_a, loss.source_b],
            "rtol": loss.rtol,
            "atol": loss.atol,
            "first_step_beyond_tolerance": loss.first_beyond,
            "max_abs_diff": loss.max_abs_diff,
        },
        "weights": [
            {"name": d.name, "max_abs_diff": _finite(d.max_abs_diff), "cosine": _finite(d.cosine)}
            | ({"note": d.note} if d.note else {})
            for d in report.weights
        ],
    }


def _finite(value: float) -> float | None:
    return value if value == value else None

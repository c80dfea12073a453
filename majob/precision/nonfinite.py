"""The first NaN/Inf of a dump run: which step, rank and API (or the loss) it appeared in.

The rule is msprobe's (``msprobe overflow_check``, ``msprobe/overflow_check``): a value is
non-finite when a tensor's ``Max`` or ``Min`` in ``dump.json`` is ``nan``, ``inf`` or ``-inf``;
an API whose inputs are finite and whose outputs are not is the **origin** (every later NaN
follows from it); ``Torch.empty``/``Torch.fill`` are left out (uninitialised memory). majob
walks the dump itself, step by step and each rank's ``dump.json`` in its order (msprobe's
execution order), because msprobe's analysis looks at one step, needs every file of it, and
names nothing when a NaN comes in through an API's input (the data, or weights an earlier step
broke). Where msprobe's analysis applies (``overflow_check.py``: a step of ``rank<N>`` dirs
with NaN and no origin found before a collective), its answer, which follows NaN across ranks
through communication, picks the rank.

Sources, each one function of the dump dir: the dump's ``dump.json`` files (statistics and
tensor tasks alike carry the statistics; a tensor entry without them is read from its
``.npy``/``.pt`` file), the bootstrap's ``loss-rank<R>.jsonl`` and, with ``--dump grad``, the
gradient summaries (``grad/rank<R>/grad_summary_<step>.csv``). In a step the forward comes
first, then the loss, then backward's gradients: at one step that is the order of the sources.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from majob.precision.gradcompare import GradRow

OVERFLOW = ("nan", "inf", "-inf")  # msprobe's CompareConst.OVERFLOW_LIST, without its tabs
IGNORED = ("Torch.empty", "Torch.fill")  # msprobe's is_ignore_op
STAT_KEYS = ("Max", "Min")  # msprobe's check_item_anomaly reads these two
COMMUNICATION = re.compile(r"^Distributed\.")


@dataclass(frozen=True)
class NonFinite:
    """Where a non-finite value was first seen in one source."""

    source: str  # "dump", "loss" or "grad"
    step: int
    rank: str  # "rank0", "proc123" (a dump dir's name) or "rank0" for a loss file
    api: str  # "Torch.log.0.forward"; "loss" for the loss
    side: str  # "output", "input" or "value" (a loss)
    value: str  # "nan", "inf" or "-inf"
    origin: bool  # its inputs are finite and its outputs are not
    where: str = ""  # the user's frame: "code/train.py:11 in forward"
    found_by: str = "majob"  # or "msprobe overflow_check"
    detail: str = ""  # a gradient's: how many of the step's parameters are non-finite

    def describe(self) -> str:
        value = "NaN" if self.value == "nan" else self.value.replace("inf", "Inf")
        if self.source == "loss":
            return f"{value} loss at step {self.step} ({self.rank})"
        if self.source == "grad":
            return (
                f"{value} in the gradient of {self.api} at step {self.step}, {self.rank} (the "
                f"parameter nearest the loss with one: backward made it there or just after; "
                f"{self.detail})"
            )
        how = (
            "the origin: its inputs are finite"
            if self.origin
            else "it came in through this input (no API before it made it)"
            if self.side == "input"
            else "its inputs already had NaN/Inf"
        )
        line = f", {self.where}" if self.where else ""
        return f"{value} in {self.api} {self.side} at step {self.step}, {self.rank} ({how}){line}"


@dataclass
class NonFiniteScan:
    """What one dump says about NaN/Inf: the first per source, the first of all, what could not
    be read."""

    firsts: dict[str, NonFinite] = field(default_factory=dict)
    unreadable: list[str] = field(default_factory=list)
    dumped_steps: tuple[int, ...] = ()

    @property
    def first(self) -> NonFinite | None:
        """The earliest: by step; at one step an API of the dump before the loss it makes."""
        order = {"dump": 0, "loss": 1, "grad": 2}
        found = self.firsts.values()
        return min(found, key=lambda f: (f.step, order.get(f.source, 9)), default=None)

    def lines(self) -> list[str]:
        """What ``majob run --dump`` and ``majob compare`` print (empty: all finite)."""
        out = [f"cut short: {line}" for line in self.unreadable]
        first = self.first
        if first is None:
            return out
        out.append(f"first NaN/Inf: {first.describe()}")
        dump, loss = self.firsts.get("dump"), self.firsts.get("loss")
        if loss is not None and first is not loss:
            out.append(f"  the loss: {loss.describe()}")
        if first.source != "dump" and first.step not in self.dumped_steps:
            steps = ", ".join(map(str, self.dumped_steps)) or "none"
            out.append(
                f"  the dump holds steps {steps}: dump step {first.step} to see the API "
                f"(--set 'precision.steps=[{first.step}]')"
            )
        elif dump is not None and first.step == 0 and not dump.origin:
            out.append(f"  NaN/Inf from step 0: {dump.api} is the first API, check the data")
        return out

    def to_json(self) -> dict[str, object]:
        first = self.first
        return {
            "first": None if first is None else asdict(first),
            "by_source": {name: asdict(f) for name, f in sorted(self.firsts.items())},
            "unreadable": list(self.unreadable),
        }


def _bad(value: object) -> str | None:
    """``nan``/``inf``/``-inf`` when ``value`` is one (a float, or msprobe's text), else None."""
    text = str(value).strip().lower()
    if text in OVERFLOW:
        return text
    return None


def _tensor_bad(item: dict[str, Any], tensor_dir: Path | None) -> str | None:
    """A tensor entry's non-finite value: from its statistics, else from its saved file."""
    stats = [item.get(key) for key in STAT_KEYS]
    for stat in stats:
        if (bad := _bad(stat)) is not None:
            return bad
    if any(isinstance(stat, (int, float)) for stat in stats) or tensor_dir is None:
        return None
    name = item.get("data_name")
    if not isinstance(name, str):
        return None
    from majob.precision.tensorfile import nonfinite_in

    return nonfinite_in(tensor_dir / name)


def _items(value: object) -> Iterator[dict[str, Any]]:
    """The tensor entries of an input or output (nested lists and dicts flattened)."""
    if isinstance(value, dict):
        if "type" in value and ("Max" in value or "data_name" in value):
            yield value
        else:
            for inner in value.values():
                yield from _items(inner)
    elif isinstance(value, list):
        for inner in value:
            yield from _items(inner)


def _side_bad(entry: dict[str, Any], keys: tuple[str, ...], tensor_dir: Path | None) -> str | None:
    for key in keys:
        for item in _items(entry.get(key)):
            if (bad := _tensor_bad(item, tensor_dir)) is not None:
                return bad
    return None


INPUTS, OUTPUTS = ("input_args", "input_kwargs", "input"), ("output",)


def scan_rank(dump_json: Path, step: int, rank: str) -> tuple[NonFinite | None, NonFinite | None]:
    """The first API with a non-finite input or output, and the first origin, of one
    ``dump.json`` (in its order). Raises ``ValueError`` for a file that is not a whole dump."""
    data = json.loads(dump_json.read_text(encoding="utf-8"))
    if not isinstance(data, dict) or not isinstance(data.get("data", {}), dict):
        raise ValueError("not a msprobe dump")
    raw_dir = data.get("dump_data_dir")
    tensor_dir = dump_json.parent / "dump_tensor_data" if raw_dir else None
    first: NonFinite | None = None
    for api, entry in data.get("data", {}).items():
        if not isinstance(entry, dict) or api.startswith(IGNORED):
            continue
        bad_in = _side_bad(entry, INPUTS, tensor_dir)
        bad_out = _side_bad(entry, OUTPUTS, tensor_dir)
        if bad_in is None and bad_out is not None:
            origin = NonFinite("dump", step, rank, api, "output", bad_out, True)
            return first or origin, origin
        if first is None and (bad_in or bad_out):
            side, bad = ("input", bad_in) if bad_in else ("output", bad_out)
            first = NonFinite("dump", step, rank, api, side, str(bad), False)
    return first, None


def _rank_order(name: str) -> tuple[int, str]:
    digits = name[4:]
    return (int(digits), name) if name.startswith("rank") and digits.isdigit() else (1 << 30, name)


def _steps(dump_dir: Path) -> list[tuple[int, Path]]:
    found = [
        (int(p.name[4:]), p) for p in dump_dir.glob("step*") if p.is_dir() and p.name[4:].isdigit()
    ]
    return sorted(found)


def scan_dump(dump_dir: Path, scan: NonFiniteScan) -> None:
    """The dump's first non-finite API: the earliest step; in it, the origin msprobe's analysis
    names, else the lowest rank's origin, else the lowest rank's first non-finite input."""
    for step, step_dir in _steps(dump_dir):
        firsts: list[NonFinite] = []
        origins: list[NonFinite] = []
        for rank_dir in sorted((p for p in step_dir.iterdir() if p.is_dir()), key=_rank_order_p):
            try:
                first, origin = scan_rank(rank_dir / "dump.json", step, rank_dir.name)
            except (OSError, ValueError) as error:
                why = "missing" if isinstance(error, FileNotFoundError) else "not a whole dump"
                scan.unreadable.append(
                    f"step {step} {rank_dir.name}: dump.json is {why} (a killed run?)"
                )
                continue
            firsts += [first] if first else []
            origins += [origin] if origin else []
        if firsts:
            chosen = _by_msprobe(step_dir, origins) or (origins or firsts)[0]
            scan.firsts["dump"] = _with_frame(chosen, step_dir / chosen.rank / "stack.json")
            return


def _rank_order_p(path: Path) -> tuple[int, str]:
    return _rank_order(path.name)


def _by_msprobe(step_dir: Path, origins: list[NonFinite]) -> NonFinite | None:
    """The origin msprobe's ``overflow_check`` names in one step of ``rank<N>`` dirs, which
    follows NaN through collectives across ranks (None when it does not apply: one rank, where
    its rule is majob's; ``proc`` dirs; msprobe missing; nothing named)."""
    from dataclasses import replace

    ranks = [p for p in step_dir.iterdir() if p.is_dir()]
    if len(ranks) < 2 or not all(p.name[4:].isdigit() and p.name[:4] == "rank" for p in ranks):
        return None
    from majob.precision.probe import overflow_check

    named = overflow_check(step_dir)
    if named is None:
        return None
    rank, api = f"rank{named[0]}", named[1]
    for origin in origins:
        if (origin.rank, origin.api) == (rank, api):
            return replace(origin, found_by="msprobe overflow_check")
    step = origins[0].step if origins else int(step_dir.name[4:])
    return NonFinite("dump", step, rank, api, "output", "nan", True, "", "msprobe overflow_check")


def _with_frame(found: NonFinite, stack_json: Path) -> NonFinite:
    """``found`` with the user's line from msprobe's ``stack.json`` (its forward call's)."""
    from dataclasses import replace

    from majob.precision.frames import user_frame

    call = found.api.rsplit(".", 1)[0]  # Torch.log.0: its forward and backward share a stack
    try:
        stacks = json.loads(stack_json.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return found
    for entry in stacks.values() if isinstance(stacks, dict) else ():
        names = entry[0] if isinstance(entry, list) and len(entry) >= 2 else None
        if isinstance(names, list) and any(str(n).startswith(call + ".") for n in names):
            return replace(found, where=user_frame(str(entry[1])))
    return found


def scan_loss(dump_dir: Path, scan: NonFiniteScan) -> None:
    """The first step whose loss (``loss-rank<R>.jsonl``) is NaN or Inf, lowest rank first."""
    found: list[NonFinite] = []
    for path in dump_dir.glob("loss-rank*.jsonl"):
        rank = "rank" + path.stem.removeprefix("loss-rank")
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                entry = json.loads(line)
                step, value = int(entry["step"]), float(entry["loss"])
            except (ValueError, KeyError, TypeError):
                continue  # a line cut short by a killed process
            if not math.isfinite(value):
                bad = "nan" if value != value else "inf" if value > 0 else "-inf"
                found.append(NonFinite("loss", step, rank, "loss", "value", bad, False))
                break
    if found:
        scan.firsts["loss"] = min(found, key=lambda f: (f.step, _rank_order(f.rank)))


def scan_grad(dump_dir: Path, scan: NonFiniteScan) -> None:
    """The first step with a non-finite gradient statistic (max, min, norm or mean), lowest
    rank first; in it the parameter nearest the loss (the last in the model's order) that has
    one: backward runs from the loss, so the parameters before it inherit the NaN from it."""
    from majob.errors import UserInputError
    from majob.precision.gradcompare import read_grads

    try:
        grads = read_grads(dump_dir, "the dump")
    except UserInputError:
        return  # cut short: the gradient comparison says so itself
    found: list[NonFinite] = []
    for rank, rank_grads in (grads or {}).items():
        for step, rows in rank_grads.steps.items():
            named = [(row, value) for row in rows if (value := _grad_bad(row)) is not None]
            if named:
                row, value = named[-1]
                detail = f"{len(named)} of {len(rows)} parameters' gradients are not finite"
                found.append(
                    NonFinite("grad", step, rank, row.name, "gradient", value, False, detail=detail)
                )
                break
    if found:
        scan.firsts["grad"] = min(found, key=lambda f: (f.step, _rank_order(f.rank)))


def _grad_bad(row: GradRow) -> str | None:
    for number in (row.max, row.min, row.norm, row.mean):
        if not math.isfinite(number):
            return "nan" if number != number else "inf" if number > 0 else "-inf"
    return None


SOURCES: tuple[Callable[[Path, NonFiniteScan], None], ...] = (scan_dump, scan_loss, scan_grad)


def scan(dump_dir: Path) -> NonFiniteScan:
    """Every source of ``dump_dir`` (a ``precision-dump``), read once."""
    result = NonFiniteScan(dumped_steps=tuple(step for step, _ in _steps(dump_dir)))
    for source in SOURCES:
        source(dump_dir, result)
    return result


def _same_place(a: NonFinite, b: NonFinite) -> bool:
    """The same step, API and side (ranks by name, ``proc<PID>`` dirs whatever their PIDs)."""
    ranks = a.rank == b.rank or (a.rank.startswith("proc") and b.rank.startswith("proc"))
    return ranks and (a.source, a.step, a.api, a.side) == (b.source, b.step, b.api, b.side)


def compare_problems(a: NonFiniteScan, b: NonFiniteScan) -> list[str]:
    """What ``majob compare`` says of A's and B's NaN/Inf (empty: none in either, both read
    whole). NaN in both at the same first API is a problem too, said as such: never a match."""
    found = [
        f"{side}'s dump is cut short ({line}): not every step was checked"
        for side, scanned in (("A", a), ("B", b))
        for line in scanned.unreadable
    ]
    first_a, first_b = a.first, b.first
    if first_a is None and first_b is None:
        return found
    if first_a is None or first_b is None:
        side, first, other = ("B", first_b, "A") if first_a is None else ("A", first_a, "B")
        assert first is not None
        return [*found, f"NaN/Inf in {side} only ({other} has none): {first.describe()}"]
    if _same_place(first_a, first_b):
        return [
            *found,
            "both runs diverge at the same first API, NaN/Inf in A and in B (the script makes "
            f"it on both sides, not the migration): {first_b.describe()}",
        ]
    earlier = "A" if (first_a.step, first_a.source) <= (first_b.step, first_b.source) else "B"
    return [
        *found,
        f"NaN/Inf in both runs, first in {earlier}; A: {first_a.describe()}; "
        f"B: {first_b.describe()}",
    ]

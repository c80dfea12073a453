"""The API accuracy pre-check (issue 39): each dumped API run again on the CPU as the benchmark.

msprobe's own pre-check (``msprobe acc_check``) runs every API of a dump twice, on the device
(NPU or GPU) and on the CPU in raised precision, and judges the device's output by its accuracy
standard (``api_accuracy_checker/compare``). The device's output is already in a tensor dump of
the cloud job (``precision: {task: tensor}``): here the CPU half runs locally, with msprobe's own
argument rebuilding (``get_api_info``), precision raising (``generate_cpu_params``), API call
(``exec_api``) and standard (``Comparator``), against the dumped outputs instead of a second run
on a device this machine does not have. Forward only: a dump holds no gradient of an API's
output to feed its backward. The result and details CSVs are msprobe's.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majob.errors import UserInputError
from majob.precision.probe import quiet_msprobe, require_msprobe

# msprobe's details CSV columns (its headers are Chinese): what majob shows of each output.
_COSINE, _MAX_ABS, _MAX_REL = "余弦相似度", "最大绝对误差", "相对误差最大值"
_RESULT_NAME = "accuracy_checking_result_{stamp}.csv"  # the name msprobe's tools expect


@dataclass(frozen=True)
class ApiVerdict:
    """One API's forward check: msprobe's status and its worst output's errors."""

    api: str  # e.g. Functional.linear.2, from step0/rank0
    where: str  # step<N>/<rank dir>
    status: str  # pass, warning, error, or skip (with the reason in message)
    max_rel_error: float | None = None
    max_abs_error: float | None = None
    cosine: float | None = None
    message: str = ""

    @property
    def failed(self) -> bool:
        return self.status in ("error", "warning")


@dataclass
class Precheck:
    """Every API checked in a dump, and where msprobe's CSVs are."""

    verdicts: list[ApiVerdict] = field(default_factory=list)
    result_csvs: list[Path] = field(default_factory=list)

    @property
    def failed(self) -> list[ApiVerdict]:
        """The APIs outside the standard, worst first (errors before warnings, then by the
        largest relative error)."""
        bad = [v for v in self.verdicts if v.failed]
        return sorted(bad, key=lambda v: (v.status != "error", -(v.max_rel_error or 0.0)))

    def count(self, status: str) -> int:
        return sum(1 for v in self.verdicts if v.status == status)


def dumps_in(dump_dir: Path) -> Iterator[tuple[str, Path]]:
    """``(step<N>/<rank dir>, its dump.json)`` for every step and rank of a dump."""
    for dump in sorted(dump_dir.glob("step*/*/dump.json")):
        yield f"{dump.parent.parent.name}/{dump.parent.name}", dump


def run_precheck(dump_dir: Path, output_dir: Path, *, apis: int | None = None) -> Precheck:
    """Check every forward API of the tensor dump in ``dump_dir`` (at most ``apis`` per step
    and rank); ``output_dir`` gets msprobe's CSVs, one pair per step and rank."""
    require_msprobe()
    found = list(dumps_in(dump_dir))
    if not found:
        raise UserInputError(
            f"{dump_dir}: no msprobe dump (step*/<rank>/dump.json)",
            hint="run with --dump first: majob run SPEC --dump (or majob submit SPEC --dump)",
        )
    result = Precheck()
    for number, (where, dump) in enumerate(found):
        document = _read_dump(dump)
        out = output_dir / where.replace("/", "-")
        out.mkdir(parents=True, exist_ok=True)
        csv_path = out / _RESULT_NAME.format(stamp=f"{20000101000000 + number}")
        with quiet_msprobe():
            statuses = _check_one(document, dump.parent / "dump_tensor_data", csv_path, apis)
        result.result_csvs.append(csv_path)
        result.verdicts += _verdicts(where, statuses, _details(csv_path))
    return result


def _read_dump(dump: Path) -> dict[str, Any]:
    try:
        document: dict[str, Any] = json.loads(dump.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise UserInputError(
            f"{dump}: not a readable msprobe dump ({type(error).__name__})",
            hint="a run killed while dumping leaves a partial dump.json: dump again",
        ) from None
    if document.get("task") != "tensor":
        raise UserInputError(
            f"{dump}: a {document.get('task', 'unknown')} dump holds no tensors to run again",
            hint="dump tensors for the pre-check: precision: {task: tensor, steps: [0], "
            "scope: [...]} in the spec (a scope keeps the dump small), then --dump",
        )
    return document


def _check_one(
    document: dict[str, Any], tensors: Path, result_csv: Path, apis: int | None
) -> dict[str, tuple[str, str]]:
    """Run msprobe's CPU half for each forward API; ``{api: (status, message)}``."""
    from msprobe.pytorch.api_accuracy_checker.common.utils import extract_basic_api_segments
    from msprobe.pytorch.api_accuracy_checker.compare.compare import Comparator

    comparator = Comparator(str(result_csv), str(_details_path(result_csv)), False)
    statuses: dict[str, tuple[str, str]] = {}
    forward = [k for k in document.get("data", {}) if k.endswith(".forward")]
    for key in forward[:apis] if apis is not None else forward:
        api = key[: -len(".forward")]
        api_type, name = extract_basic_api_segments(api)
        try:
            bench, device, inputs = _bench_and_device(
                document["data"][key], api_type, name, tensors
            )
        except Exception as error:  # msprobe's own reasons: an API it cannot run on CPU
            statuses[api] = ("skip", f"{type(error).__name__}: {error}"[:200])
            continue
        passed, _ = comparator.compare_output(api, _data_info(device, bench, inputs))
        statuses[api] = ("pass" if passed else "fail", "")
    return statuses


def _bench_and_device(
    info: dict[str, Any], api_type: str, name: str, tensors: Path
) -> tuple[Any, Any, list[Any]]:
    from msprobe.pytorch.api_accuracy_checker.acc_check.acc_check import get_api_info
    from msprobe.pytorch.api_accuracy_checker.acc_check.acc_check_utils import (
        ExecParams,
        exec_api,
        generate_cpu_params,
    )

    args, kwargs, _ = get_api_info(info, name, str(tensors))
    cpu = generate_cpu_params(args, kwargs, False, name)
    params = ExecParams(
        api_type, name, "cpu", cpu.cpu_args, cpu.cpu_kwargs, cpu.is_autocast, cpu.autocast_dtype
    )
    bench = exec_api(params)
    device = _dumped_outputs(info.get("output", []), tensors)
    return bench, device, [args, kwargs]


def _dumped_outputs(entries: list[Any], tensors: Path) -> Any:
    import torch

    outputs = []
    for entry in entries:
        data_name = entry.get("data_name") if isinstance(entry, dict) else None
        if not data_name:
            raise ValueError("an output without saved data")
        outputs.append(torch.load(tensors / data_name, weights_only=True))
    if not outputs:
        raise ValueError("no output saved")
    return outputs[0] if len(outputs) == 1 else tuple(outputs)


def _data_info(device: Any, bench: Any, inputs: list[Any]) -> Any:
    from msprobe.pytorch.api_accuracy_checker.acc_check.acc_check_utils import UtDataInfo

    return UtDataInfo(None, None, device, bench, None, inputs, "")


def _details_path(result_csv: Path) -> Path:
    return result_csv.with_name(result_csv.name.replace("result", "details"))


def _details(result_csv: Path) -> dict[str, dict[str, str]]:
    """msprobe's details rows, the worst output's per API (``<api>.forward.output.<i>``)."""
    rows: dict[str, dict[str, str]] = {}
    path = _details_path(result_csv)
    if not path.exists():
        return rows
    with path.open(encoding="utf-8-sig", newline="") as handle:
        for row in csv.DictReader(handle):
            api = row.get("API Name", "").split(".forward", 1)[0]
            if api not in rows or _number(row.get(_MAX_REL)) > _number(rows[api].get(_MAX_REL)):
                rows[api] = row
    return rows


def _verdicts(
    where: str, statuses: dict[str, tuple[str, str]], details: dict[str, dict[str, str]]
) -> list[ApiVerdict]:
    verdicts = []
    for api, (outcome, message) in statuses.items():
        row = details.get(api, {})
        status = outcome if outcome == "skip" else (row.get("Status") or outcome).strip().lower()
        if status == "fail":
            status = "error"
        verdicts.append(
            ApiVerdict(
                api,
                where,
                status,
                _optional(row.get(_MAX_REL)),
                _optional(row.get(_MAX_ABS)),
                _optional(row.get(_COSINE)),
                message or " ".join((row.get("Message") or "").split()),
            )
        )
    return verdicts


def _number(text: str | None) -> float:
    value = _optional(text)
    return value if value is not None else -math.inf


def _optional(text: str | None) -> float | None:
    try:
        value = float((text or "").strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


__all__ = ["ApiVerdict", "Precheck", "dumps_in", "run_precheck"]

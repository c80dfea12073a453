"""Where a profile's files are: the ``profiling/`` root, its rank folders, their files.

The Ascend PyTorch profiler layout, which torch_npu writes on an NPU and majob's bootstrap
writes on CPU and GPU too::

    profiling/
      worker-<node>-rank<R>_<timestamp>_ascend_pt/
        ASCEND_PROFILER_OUTPUT/trace_view.json     the Chrome trace (and, on an NPU,
                                                   kernel_details.csv, op_statistic.csv ...)
        profiler_info_<R>.json                     how it was collected; absent after kill -9
        majob_steps_<R>.jsonl                      one line per optimizer step, every step

A target may be that root, one rank folder, or a directory holding a ``profiling/`` somewhere
below (a run's outputs).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majob.errors import UserInputError

RANK_SUFFIX = "_ascend_pt"
OUTPUT_DIR = "ASCEND_PROFILER_OUTPUT"
TRACE_NAMES = ("trace_view.json",)
_WORKER = re.compile(r"^worker-(\d+)-rank(\d+)_")
_RANK_FILE = re.compile(r"_(\d+)\.json$")
_SEARCH_DEPTH = 6


@dataclass(frozen=True)
class RankDir:
    """One rank's folder of a profile."""

    path: Path
    label: str  # worker-<node>-rank<R>, or the folder's name
    node: int | None
    rank: int | None
    trace: Path | None
    info: dict[str, Any] | None  # majob's (or torch_npu's) profiler_info_<R>.json
    steps_file: Path | None


def rank_dirs(target: Path) -> list[RankDir]:
    """Every rank folder at or under ``target``, by node and rank; raises ``UserInputError``
    when there is none (not a profile directory)."""
    if not target.is_dir():
        raise UserInputError(f"{target}: no such directory")
    found = [target] if target.name.endswith(RANK_SUFFIX) else _search(target, 0)
    if not found:
        raise UserInputError(
            f"{target}: not a profile directory (no *{RANK_SUFFIX} folder in it or below)",
            hint="profile a run first: `majob run SPEC --perf` writes profiling/ into its outputs",
        )
    dirs = [read_rank_dir(path) for path in found]
    return sorted(dirs, key=lambda d: (_key(d.node), _key(d.rank), d.label))


def _key(value: int | None) -> int:
    return 1 << 30 if value is None else value


def _search(folder: Path, depth: int) -> list[Path]:
    """The rank folders below ``folder``: those of the first level that has any."""
    try:
        children = sorted(p for p in folder.iterdir() if p.is_dir() and not p.is_symlink())
    except OSError:
        return []
    ranks = [p for p in children if p.name.endswith(RANK_SUFFIX)]
    if ranks or depth >= _SEARCH_DEPTH:
        return ranks
    preferred = [p for p in children if p.name == "profiling"]
    for child in preferred + [p for p in children if p.name != "profiling"]:
        found = _search(child, depth + 1)
        if found:
            return found
    return []


def read_rank_dir(path: Path) -> RankDir:
    match = _WORKER.match(path.name)
    node = int(match.group(1)) if match else None
    rank = int(match.group(2)) if match else None
    info_path = _first(path.glob("profiler_info*.json"))
    info = _json_object(info_path) if info_path is not None else None
    if info is not None:
        rank = _int(info.get("rank_id"), rank)
        node = _int(info.get("node"), node)
    if rank is None and info_path is not None and (found := _RANK_FILE.search(info_path.name)):
        rank = int(found.group(1))
    trace = _first(p for name in TRACE_NAMES for p in (path / OUTPUT_DIR).glob(name))
    if trace is None:  # torch.profiler's tensorboard handler: <worker>.<ts>.pt.trace.json
        trace = _first(path.rglob("*.pt.trace.json"))
    steps = _first(path.glob("majob_steps*.jsonl"))
    label = match.group(0).rstrip("_") if match else path.name.removesuffix(RANK_SUFFIX)
    return RankDir(path, label, node, rank, trace, info, steps)


def _first(paths: Any) -> Path | None:
    return min((p for p in paths if p.is_file()), default=None)


def _int(value: object, default: int | None) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _json_object(path: Path) -> dict[str, Any] | None:
    """A small JSON object file, or None when unreadable or cut short."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None

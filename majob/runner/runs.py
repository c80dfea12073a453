"""The run directories the local stage leaves (``.majob/runs/<run id>/``): list, show, clean.

Each run keeps its code copy, logs, outputs and ``record.json``. Without a limit they pile up
(dozens an hour while iterating), so after each run a retention policy removes old ones:

- the newest ``keep`` runs are always kept (default 20, ``MAJOB_RUNS_KEEP``);
- any run younger than ``max_age`` is kept (default 1 day, ``MAJOB_RUNS_MAX_AGE``, e.g. ``12h``,
  ``7d``);
- the rest is removed. ``MAJOB_RUNS_KEEP=all`` turns the automatic clean-up off.

Only directories named like a run id are ever touched; a run without ``record.json`` (running
now, or killed before it could write it) is left alone until it is a day older than the age
limit. Removal never follows symlinks: the inputs a run links to are not touched.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import json
import os
import re
import shutil
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from majob.errors import ConfigError, UserInputError
from majob.spec.durations import format_duration, parse_duration
from majob.storage.tree_size import tree_size

RUNS_DIR = Path(".majob") / "runs"
DEFAULT_KEEP = 20
DEFAULT_MAX_AGE = 86400  # seconds: one day
INCOMPLETE_GRACE = 86400  # a run without a record may still be running: a day more
KEEP_ENV = "MAJOB_RUNS_KEEP"
MAX_AGE_ENV = "MAJOB_RUNS_MAX_AGE"
# <UTC stamp>-<spec name>-<6 hex>: what runner.record.new_run_id makes.
_RUN_ID = re.compile(r"^(\d{8}T\d{6}Z)-([A-Za-z0-9_-]{1,64})-([0-9a-f]{6})$")


@dataclass(frozen=True)
class Retention:
    """Keep the newest ``keep`` runs and every run younger than ``max_age`` seconds."""

    keep: int = DEFAULT_KEEP
    max_age: int = DEFAULT_MAX_AGE

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Retention | None:
        """The policy ``MAJOB_RUNS_KEEP`` / ``MAJOB_RUNS_MAX_AGE`` set (None: ``KEEP=all``)."""
        env = os.environ if environ is None else environ
        keep_text = env.get(KEEP_ENV, "").strip()
        if keep_text.lower() == "all":
            return None
        keep = DEFAULT_KEEP
        if keep_text:
            if not keep_text.isdigit():
                raise ConfigError(
                    f"{KEEP_ENV}={keep_text!r}: write a number of runs to keep, or 'all'"
                )
            keep = int(keep_text)
        max_age = DEFAULT_MAX_AGE
        age_text = env.get(MAX_AGE_ENV, "").strip()
        if age_text:
            try:
                max_age = parse_duration(age_text)
            except ValueError as error:
                raise ConfigError(f"{MAX_AGE_ENV}={age_text!r}: {error}") from None
        return cls(keep, max_age)

    def describe(self) -> str:
        return f"the newest {self.keep} and any younger than {format_duration(self.max_age)}"


@dataclass(frozen=True)
class RunInfo:
    """One run directory, read from its ``record.json`` (``status`` ``incomplete`` without)."""

    run_id: str
    path: Path
    spec_name: str
    stage: str
    status: str
    started: dt.datetime  # UTC
    duration: float | None
    size: int
    record: Mapping[str, Any]

    @property
    def complete(self) -> bool:
        return bool(self.record)


def default_runs_dir() -> Path:
    return Path.cwd() / RUNS_DIR


def is_run_id(name: str) -> bool:
    return _RUN_ID.match(name) is not None


def _stamp(run_id: str) -> dt.datetime:
    match = _RUN_ID.match(run_id)
    assert match is not None
    return dt.datetime.strptime(match.group(1), "%Y%m%dT%H%M%SZ").replace(tzinfo=dt.timezone.utc)


def read_run(path: Path, *, sized: bool = True) -> RunInfo:
    """What ``path`` (a run directory) holds; a missing or unreadable record is ``incomplete``.
    ``sized=False`` skips walking the tree (``size`` is then 0)."""
    record: dict[str, Any] = {}
    try:
        loaded = json.loads((path / "record.json").read_text(encoding="utf-8"))
        if isinstance(loaded, dict):
            record = loaded
    except (OSError, ValueError):
        record = {}
    match = _RUN_ID.match(path.name)
    assert match is not None
    started = _stamp(path.name)
    if isinstance(record.get("started_at"), str):
        with contextlib.suppress(ValueError):  # a hand-edited record: the id's stamp stands
            started = dt.datetime.fromisoformat(record["started_at"])
    duration = record.get("duration_seconds")
    return RunInfo(
        run_id=path.name,
        path=path,
        spec_name=str(record.get("spec_name", match.group(2))),
        stage=str(record.get("stage", "local")),
        status=str(record.get("status", "incomplete")),
        started=started,
        duration=float(duration) if isinstance(duration, (int, float)) else None,
        size=tree_size(path) if sized else 0,
        record=record,
    )


def list_runs(runs_dir: Path, *, sized: bool = True) -> list[RunInfo]:
    """Every run under ``runs_dir``, newest first (an absent dir holds none)."""
    try:
        entries = [p for p in runs_dir.iterdir() if p.is_dir() and not p.is_symlink()]
    except FileNotFoundError:
        return []
    runs = [read_run(p, sized=sized) for p in entries if is_run_id(p.name)]
    return sorted(runs, key=lambda r: (r.started, r.run_id), reverse=True)


def find_run(runs_dir: Path, wanted: str) -> RunInfo:
    """The run whose id is ``wanted``, starts with it, or (``latest``) the newest one."""
    runs = list_runs(runs_dir)
    if not runs:
        raise UserInputError(f"no runs in {runs_dir}", hint="run one with `majob run SPEC`")
    if wanted == "latest":
        return runs[0]
    exact = [r for r in runs if r.run_id == wanted]
    matches = exact or [r for r in runs if r.run_id.startswith(wanted)]
    if len(matches) == 1:
        return matches[0]
    if not matches:
        raise UserInputError(
            f"no run {wanted!r} in {runs_dir}", hint="`majob runs list` shows the run ids"
        )
    shown = ", ".join(r.run_id for r in matches[:3])
    raise UserInputError(
        f"{wanted!r} matches {len(matches)} runs ({shown}...)", hint="give more of the run id"
    )


def select_old(
    runs: Sequence[RunInfo],
    *,
    keep: int,
    max_age: int | None,
    now: dt.datetime,
    protect: Iterable[str] = (),
) -> list[RunInfo]:
    """The runs (newest first in ``runs``) a clean-up removes: beyond the newest ``keep`` and
    older than ``max_age`` seconds (None: whatever their age), never one in ``protect``, and
    one without a record only a day after that (it may still be running)."""
    kept = set(protect)
    old = []
    for index, run in enumerate(runs):
        if index < keep or run.run_id in kept:
            continue
        age = (now - run.started).total_seconds()
        limit = max_age or 0
        if not run.complete:
            limit += INCOMPLETE_GRACE
        if age > limit:
            old.append(run)
    return old


def remove_runs(runs: Iterable[RunInfo]) -> list[RunInfo]:
    """Delete the runs' directories (symlinks inside are removed, not followed); returns those
    that are gone."""
    removed = []
    for run in runs:
        shutil.rmtree(run.path, ignore_errors=True)
        if not run.path.exists():
            removed.append(run)
    return removed


def apply_retention(
    runs_dir: Path, retention: Retention, *, protect: Iterable[str] = ()
) -> list[RunInfo]:
    """Remove what ``retention`` does not keep (after each run); returns the runs removed."""
    now = dt.datetime.now(dt.timezone.utc)
    old = select_old(
        list_runs(runs_dir, sized=False),
        keep=retention.keep,
        max_age=retention.max_age,
        now=now,
        protect=protect,
    )
    return remove_runs(old)

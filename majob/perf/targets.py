"""What ``majob perf TARGET`` reads: a directory, a local run id or an ``obs://`` path, as the
local directory that holds the profile (``majob.perf.layout`` finds the rank folders in it).

- a directory: a ``profiling/`` root, one ``*_ascend_pt`` folder, or a run's directory or
  outputs with a ``profiling/`` below;
- a local run id (or a prefix, or ``latest``) under ``.majob/runs``: that run's directory;
- an ``obs://`` path: its ``profiling/`` (or, when it has none, the path itself) downloaded
  into ``.majob/perf/downloads/`` (fresh each time), with the profile's credentials.

A job id or name is read by the CLI (it needs the ledger, a floor above this one): it finds
the job's output on OBS and comes here with that path.
"""

from __future__ import annotations

import hashlib
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import UserInputError
from majob.perf.layout import RANK_SUFFIX
from majob.runner.runs import find_run, is_run_id
from majob.storage.uri import ObsUri

if TYPE_CHECKING:
    from majob.storage.base import ObjectStore

PERF_DIR = Path(".majob") / "perf"


@dataclass(frozen=True)
class Target:
    label: str  # as the user named it
    path: Path  # the local directory to read


def resolve(text: str, runs_dir: Path, cache_dir: Path, profile: str | None = None) -> Target:
    if text.startswith("obs://"):
        return Target(text, download(text, cache_dir, profile))
    path = Path(text)
    if path.is_dir():
        return Target(text, path)
    if runs_dir.is_dir() and (is_run_id(text) or text == "latest" or "/" not in text):
        return Target(text, find_run(runs_dir, text).path)
    raise UserInputError(
        f"{text}: no such directory, run id or OBS path",
        hint="give a profile directory, a run id (`majob runs list`), an obs:// path or a job",
    )


def download(text: str, cache_dir: Path, profile: str | None) -> Path:
    """The profile under the OBS path ``text``, downloaded (its ``profiling/`` first)."""
    from majob.service.connect import open_store
    from majob.spec.profiles import load_profile
    from majob.storage.download import download_tree

    uri = ObsUri.parse(text).as_dir()
    target = cache_dir / hashlib.sha256(text.encode()).hexdigest()[:16]
    if target.exists():
        shutil.rmtree(target)  # a rerun job's outputs replace the old ones
    store = open_store(load_profile(profile))
    try:
        for candidate in _candidates(store, uri):
            if download_tree(store, candidate, target / "profiling").downloaded:
                break
    finally:
        store.close()
    if any(p.is_dir() for p in target.rglob(f"*{RANK_SUFFIX}")):
        return target
    raise UserInputError(
        f"{text}: no profiling data there (no *{RANK_SUFFIX} folder under it or its profiling/)",
        hint="profile the job: `majob submit SPEC --perf` (or give the stage's output path)",
    )


def _candidates(store: ObjectStore, uri: ObsUri) -> list[ObsUri]:
    """Where under ``uri`` the profile is: itself when it is a profiling/ or rank folder, else
    its ``profiling/``, else itself when a rank folder is somewhere below (never a whole output
    of checkpoints for nothing)."""
    from majob.storage.listing import iter_folder

    if uri.key.rstrip("/").endswith(("profiling", RANK_SUFFIX)):
        return [uri]
    below = [ObsUri.parse(uri.uri + "profiling/")]
    if any(f"{RANK_SUFFIX}/" in info.key for info in iter_folder(store, uri)):
        below.append(uri)
    return below

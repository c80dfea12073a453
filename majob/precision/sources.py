"""What ``majob compare`` compares: a run id, a directory or an OBS path, as one ``RunDump``.

A ``RunDump`` holds the msprobe dump dir (``step<N>/<rank or proc>/dump.json``), the loss series
the bootstrap recorded (``loss-rank<R>.jsonl``), the final checkpoint and the logs, whichever
exist. Accepted shapes, tried in this order:

- an ``obs://`` path: downloaded first (into ``.majob/precision/downloads/``), then as a dir;
- a local run id (or a prefix, or ``latest``) under ``.majob/runs``: its output dirs and logs;
- a directory that is a dump (has ``step*``), holds one (``precision-dump/``), or is a run dir.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

from majob.errors import UserInputError
from majob.precision.dumpconfig import DUMP_DIR
from majob.runner.runs import find_run, is_run_id

CHECKPOINT_SUFFIXES = (".pth", ".pt", ".ckpt")


@dataclass(frozen=True)
class RunDump:
    """One side of a compare."""

    label: str  # as the user named it
    dump_dir: Path | None  # the msprobe dump (``step*`` inside), None when the run has none
    files_dir: Path  # where its outputs are: metrics.json, checkpoints
    logs: tuple[Path, ...] = field(default_factory=tuple)
    spec_name: str | None = None
    run_dir: Path | None = None  # the directory it was read from (its record.json, if any)

    def checkpoint(self) -> Path | None:
        """The final checkpoint: the newest ``.pth/.pt/.ckpt`` outside the dump."""
        found = [
            p
            for p in self.files_dir.rglob("*")
            if p.suffix in CHECKPOINT_SUFFIXES
            and p.is_file()
            and (self.dump_dir is None or self.dump_dir not in p.parents)
            # another run's dump beside this one holds tensors, not this run's checkpoint
            and not any(parent.name == DUMP_DIR for parent in p.relative_to(self.files_dir).parents)
        ]
        return max(found, key=lambda p: (p.stat().st_mtime, str(p))) if found else None


def _is_dump(path: Path) -> bool:
    return any(p.is_dir() and p.name.startswith("step") for p in path.iterdir())


def _dump_in(root: Path) -> Path | None:
    if _is_dump(root) or any(root.glob("loss-rank*.jsonl")):
        return root
    found = sorted(p for p in root.rglob(DUMP_DIR) if p.is_dir())
    return found[0] if found else None


def from_directory(path: Path, label: str) -> RunDump:
    if not path.is_dir():
        raise UserInputError(
            f"{label}: no such directory, run id or OBS path",
            hint="give a run id (`majob runs list`), a dump directory or an obs:// path",
        )
    outputs = path / "ma-user" / "modelarts" / "outputs"
    root = outputs if outputs.is_dir() else path
    dump = _dump_in(root)
    logs = tuple(sorted((path / "logs").glob("*.log")))
    # Its outputs are beside the dump only in the layout majob writes (<output>/precision-dump);
    # a bare dump given by its own path has none: its parent may hold anything (another dump).
    beside = dump is not None and dump.name == DUMP_DIR and root != outputs
    files = dump.parent if beside and dump is not None else root
    return RunDump(label, dump, files, logs, _spec_name(path / "record.json"), path)


def _spec_name(record: Path) -> str | None:
    """The spec a run directory ran (its ``record.json``), None for a bare dump."""
    try:
        name = json.loads(record.read_text(encoding="utf-8")).get("spec_name")
    except (OSError, ValueError, AttributeError):
        return None
    return name if isinstance(name, str) else None


def resolve(text: str, runs_dir: Path, cache_dir: Path, profile: str | None = None) -> RunDump:
    """``text`` as a ``RunDump`` (see the module's docstring for the shapes accepted); an OBS
    path is read with the defaults ``profile``'s store (as ``majob submit`` writes it)."""
    if text.startswith("obs://"):
        return _from_obs(text, cache_dir, profile)
    path = Path(text)
    if path.is_dir():
        return from_directory(path, text)
    if runs_dir.is_dir() and (is_run_id(text) or text == "latest" or "/" not in text):
        return from_directory(find_run(runs_dir, text).path, text)
    return from_directory(path, text)


def _from_obs(text: str, cache_dir: Path, profile: str | None) -> RunDump:
    """Download an OBS dump (or output dir) into the cache, a dir per path (fresh each time)."""
    import shutil

    from majob.service.connect import open_store
    from majob.spec.profiles import load_profile
    from majob.storage.download import download_tree
    from majob.storage.uri import ObsUri

    uri = ObsUri.parse(text)
    target = cache_dir / hashlib.sha256(text.encode()).hexdigest()[:16]
    if target.exists():
        shutil.rmtree(target)  # a rerun job's outputs replace the old ones
    store = open_store(load_profile(profile))
    try:
        result = download_tree(store, uri.as_dir(), target)
    finally:
        store.close()
    if result.downloaded == 0:
        raise UserInputError(f"{text}: nothing there to compare", hint="check the OBS path")
    return from_directory(target, text)

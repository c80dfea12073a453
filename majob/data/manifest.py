"""The stage manifest: what a stage copied, kept beside the data on the volume.

``<PATH>/.majob-stage.json`` says which OBS folder the tree came from, the digest of the listing
it was copied from, every file's size, ETag and MD5, whether the copy is ``complete``,
``incomplete`` (interrupted, a full volume, a failed verify) or ``stale`` (the source changed
while it was copied), and when. It is rewritten whole and atomically (a temporary file renamed
over it). While a copy runs, each file that lands is appended as one JSON line to
``<PATH>/.majob-stage.journal``: a run killed with SIGKILL leaves the lines of the files it
finished (a torn last line is ignored), and the next run does not copy them again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Literal

from majob.storage.base import ObjectInfo

MANIFEST_NAME = ".majob-stage.json"
JOURNAL_NAME = ".majob-stage.journal"
FORMAT = 1
State = Literal["complete", "incomplete", "stale"]


@dataclass(frozen=True)
class StagedFile:
    """One file as it landed: from ``key`` (``size`` bytes, ``etag``) to ``rel``, its MD5, and
    its size and mtime on disk when it landed (the quick re-verify compares those).

    ``md5`` is the multipart ETag (``<md5>-<parts>``) when ``part_size`` is set: a multipart
    object majob uploaded without an MD5 is checked by its part MD5s at that part size (its
    ranged GETs make those on the threads that receive them), and a whole-file MD5 would cost
    another pass over its bytes."""

    rel: str
    key: str
    size: int
    etag: str
    md5: str
    mtime_ns: int
    part_size: int | None = None


@dataclass
class Manifest:
    source: str
    listing_digest: str
    state: State
    started: float
    finished: float | None = None
    files: dict[str, StagedFile] = field(default_factory=dict)
    changes: list[str] = field(default_factory=list)  # what changed, for a stale stage

    @property
    def total_bytes(self) -> int:
        return sum(f.size for f in self.files.values())

    def to_json(self) -> str:
        """The manifest as JSON, one file a line (written by the C encoder: ``indent`` would
        take the pure-Python one, ~35 µs a file)."""
        head = {name: getattr(self, name) for name in _HEAD_FIELDS}
        head["format"] = FORMAT
        head["changes"] = list(self.changes)
        lines = [json.dumps(_fields(f)) for f in sorted(self.files.values(), key=lambda f: f.rel)]
        return json.dumps(head)[:-1] + ', "files": [\n' + ",\n".join(lines) + "\n]}\n"


def _fields(staged: StagedFile) -> dict[str, object]:
    """A file's record as written: ``part_size`` only when it is set (a manifest of files with
    MD5s reads as it did before there was one)."""
    fields = vars(staged)
    if staged.part_size is None:
        return {name: value for name, value in fields.items() if name != "part_size"}
    return fields


_HEAD_FIELDS = ("source", "listing_digest", "state", "started", "finished")


@dataclass(frozen=True)
class Listed:
    """A source listing's files (folder markers left out), each with its path below the
    stage's directory, and the listing's digest."""

    objects: tuple[ObjectInfo, ...]
    rels: tuple[str, ...]
    digest: str


def listing_digest(objects: Iterable[ObjectInfo]) -> str:
    """A digest of what a listing says of each object (key, size, ETag): equal digests, the
    same data."""
    digest = hashlib.sha256()
    for info in sorted(objects, key=lambda o: o.key):
        digest.update(f"{info.key}\0{info.size}\0{info.etag.strip(chr(34))}\n".encode())
    return digest.hexdigest()


def read_manifest(dest: Path) -> Manifest | None:
    """The manifest in ``dest``; None when there is none or it cannot be read (a stage then
    starts from the journal and the files on disk)."""
    try:
        data = json.loads((dest / MANIFEST_NAME).read_text(encoding="utf-8"))
        files = {f["rel"]: StagedFile(**f) for f in data["files"]}
        return Manifest(
            source=str(data["source"]),
            listing_digest=str(data["listing_digest"]),
            state=data["state"],
            started=float(data["started"]),
            finished=data.get("finished"),
            files=files,
            changes=list(data.get("changes", [])),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_manifest(dest: Path, manifest: Manifest) -> None:
    """Replace the manifest atomically: a reader sees the old one or the new one."""
    fd, tmp = tempfile.mkstemp(prefix=".majob-stage.", suffix=".tmp", dir=dest)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            handle.write(manifest.to_json())
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, dest / MANIFEST_NAME)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def read_journal(dest: Path) -> dict[str, StagedFile]:
    """The files an earlier, interrupted run finished, by relative path."""
    found: dict[str, StagedFile] = {}
    try:
        lines = (dest / JOURNAL_NAME).read_text(encoding="utf-8").splitlines()
    except OSError:
        return found
    for line in lines:
        try:
            staged = StagedFile(**json.loads(line))
        except (ValueError, TypeError):
            continue  # the last line of a run killed while it wrote
        found[staged.rel] = staged
    return found


@contextlib.contextmanager
def journal(dest: Path) -> Iterator[IO[str]]:
    """The journal, opened for appending one line per landed file."""
    with open(dest / JOURNAL_NAME, "a", encoding="utf-8") as handle:
        yield handle


def journal_line(handle: IO[str], staged: StagedFile) -> None:
    """One line per file, written and flushed in one go (a kill leaves at most a torn last
    line)."""
    handle.write(json.dumps(_fields(staged)) + "\n")
    handle.flush()


def drop_journal(dest: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        (dest / JOURNAL_NAME).unlink()


def now() -> float:
    return time.time()

"""The plan step of a sync: what would move, decided before anything moves.

``scan_local`` walks the tree with the one set of ignore rules (``storage/ignore.py``) and hashes
files through the hash cache; ``plan_sync`` compares that with one listing of the remote prefix.
A file is skipped when an object of the same size and MD5 is already there: the MD5 of a single
PUT is its ETag, the MD5 of a multipart object is the ``md5`` metadata majob stores on it (a
multipart ETag is not an MD5 of the content).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from majob.errors import UserInputError
from majob.storage.base import ObjectInfo
from majob.storage.ignore import walk_files
from majob.storage.localstate import HashCache
from majob.storage.uri import ObsUri

MD5_METADATA = "md5"  # stored as x-obs-meta-md5 / x-amz-meta-md5 on multipart objects
_HEX_MD5 = re.compile(r"^[0-9a-f]{32}$")

# Names that usually hold secrets; matched against each uploaded file's base name.
SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials*",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    "*.tfstate",
)


@dataclass(frozen=True)
class LocalFile:
    """One file to sync: its ``/``-separated path below the root, where it is, what it holds."""

    rel: str
    path: Path
    size: int
    md5: str
    mtime_ns: int = 0


@dataclass(frozen=True)
class PlannedUpload:
    file: LocalFile
    key: str
    reason: Literal["new", "changed"]


@dataclass(frozen=True)
class SyncPlan:
    """Everything a sync will do; ``deletes`` is empty unless deletion was asked for."""

    source: Path
    dest: ObsUri
    uploads: tuple[PlannedUpload, ...]
    skipped: tuple[LocalFile, ...]
    extraneous: tuple[ObjectInfo, ...]
    delete: bool
    secrets: tuple[str, ...] = field(default=())

    @property
    def deletes(self) -> tuple[ObjectInfo, ...]:
        return self.extraneous if self.delete else ()

    @property
    def upload_bytes(self) -> int:
        return sum(u.file.size for u in self.uploads)

    @property
    def skip_bytes(self) -> int:
        return sum(f.size for f in self.skipped)

    @property
    def delete_bytes(self) -> int:
        return sum(o.size for o in self.deletes)

    @property
    def is_noop(self) -> bool:
        return not self.uploads and not self.deletes

    def summary_lines(self) -> list[str]:
        """The plan as the CLI prints it, before anything moves."""
        new = sum(1 for u in self.uploads if u.reason == "new")
        extra = sum(o.size for o in self.extraneous)

        def line(verb: str, count: int, noun: str, size: int, detail: str) -> str:
            return f"  {verb:<6} {count:>7} {noun:<7} {human_bytes(size):>10}  ({detail})"

        lines = [
            f"sync {self.source} -> {self.dest.as_dir()}",
            line("upload", len(self.uploads), "files", self.upload_bytes,
                 f"{new} new, {len(self.uploads) - new} changed"),
            line("skip", len(self.skipped), "files", self.skip_bytes, "unchanged"),
        ]  # fmt: skip
        if self.delete:
            lines.append(line("delete", len(self.extraneous), "objects", extra, "not in source"))
        elif self.extraneous:
            lines.append(
                line("keep", len(self.extraneous), "objects", extra, "not in source; --delete")
            )
        return lines

    def warning_lines(self) -> list[str]:
        if not self.secrets:
            return []
        shown = ", ".join(self.secrets[:5]) + (" ..." if len(self.secrets) > 5 else "")
        return [
            f"warning: {counted(len(self.secrets), 'file')} that may hold secrets in the upload: "
            f"{shown}",
            "warning: add them to .majobignore (or code.ignore) to keep them off OBS",
        ]


def counted(count: int, noun: str) -> str:
    """``1 file``, ``2 files``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def human_bytes(count: int) -> str:
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")


def looks_secret(rel: str) -> bool:
    """Whether the file's name is one that usually holds a secret (``.env``, ``id_rsa``...)."""
    name = rel.rsplit("/", 1)[-1]
    return any(fnmatch.fnmatchcase(name, pattern) for pattern in SECRET_PATTERNS)


def scan_local(
    root: Path, extra_patterns: Iterable[str] = (), cache: HashCache | None = None
) -> list[LocalFile]:
    """The files under ``root`` that are not ignored, hashed (through ``cache`` when given)."""
    cache = cache if cache is not None else HashCache(None)
    files = []
    for rel in walk_files(root, extra_patterns):
        path = root / rel
        try:
            stat = os.stat(path)
            md5 = cache.md5(rel, path, stat)
        except OSError as error:  # unreadable, or gone since the walk saw it
            raise UserInputError(
                f"cannot read {path}: {error.strerror or error}",
                hint="fix its permissions, or leave it out with .majobignore",
            ) from None
        files.append(LocalFile(rel, path, stat.st_size, md5, stat.st_mtime_ns))
    return files


def md5_of(info: ObjectInfo) -> str | None:
    """The content MD5 of a remote object, when its listing or HEAD tells it."""
    stored = info.metadata.get(MD5_METADATA, "").lower()
    if _HEX_MD5.match(stored):
        return stored
    etag = info.etag.strip('"').lower()
    return etag if _HEX_MD5.match(etag) else None


def plan_sync(
    source: Path,
    local: Sequence[LocalFile],
    dest: ObsUri,
    remote: Iterable[ObjectInfo],
    *,
    delete: bool = False,
    head: Callable[[str], ObjectInfo | None] | None = None,
) -> SyncPlan:
    """Compare ``local`` with the ``remote`` listing of ``dest``. ``head`` is asked only for a
    same-size object whose listing carries no MD5 (a multipart ETag): its metadata has it."""
    prefix = dest.as_dir().key
    remote_by_rel: dict[str, ObjectInfo] = {}
    for info in remote:
        if not info.key.startswith(prefix) or info.key.endswith("/"):
            continue  # outside the prefix, or a folder marker
        remote_by_rel[info.key[len(prefix) :]] = info

    uploads: list[PlannedUpload] = []
    skipped: list[LocalFile] = []
    for file in local:
        key = dest.join(file.rel).key
        there = remote_by_rel.pop(file.rel, None)
        if there is None:
            uploads.append(PlannedUpload(file, key, "new"))
            continue
        same = there.size == file.size and _remote_md5(there, head) == file.md5
        if same:
            skipped.append(file)
        else:
            uploads.append(PlannedUpload(file, key, "changed"))
    extraneous = tuple(sorted(remote_by_rel.values(), key=lambda o: o.key))
    secrets = tuple(f.rel for f in local if looks_secret(f.rel))
    return SyncPlan(
        source=source,
        dest=dest.as_dir(),
        uploads=tuple(uploads),
        skipped=tuple(skipped),
        extraneous=extraneous,
        delete=delete,
        secrets=secrets,
    )


def _remote_md5(info: ObjectInfo, head: Callable[[str], ObjectInfo | None] | None) -> str | None:
    md5 = md5_of(info)
    if md5 is None and head is not None:
        fresh = head(info.key)
        md5 = md5_of(fresh) if fresh is not None else None
    return md5

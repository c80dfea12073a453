"""The plan step of a sync: what would move, decided before anything moves.

``scan_local`` walks the tree with the one set of ignore rules (``storage/ignore.py``) and hashes
files through the hash cache; ``plan_sync`` compares that with one listing of the remote prefix.
A file is skipped when an object of the same size and content is already there: the MD5 of a
single PUT is its ETag; a multipart object's ETag (``md5(part MD5s)-N``) is not an MD5 of the
content, so majob stores the part size on it as metadata (and the file's MD5 when it was known
before the upload) and compares a same-size file by that MD5, or by the multipart ETag the local
file makes when cut in parts of that size (both cached, read from the file only once).

Files at or above ``lazy_from`` bytes (the multipart threshold) are not hashed by the scan: their
digests are computed only when a same-size object must be compared, so a first upload reads a big
file once, hashing each part as it is sent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, Protocol

from majob.errors import UserInputError
from majob.storage.base import ObjectInfo
from majob.storage.ignore import head_of, looks_secret, walk_files, withheld_line
from majob.storage.localstate import HashCache
from majob.storage.targets import upload_key
from majob.storage.uri import ObsUri
from majob.text import counted, human_bytes, printable

MD5_METADATA = "md5"  # stored as x-obs-meta-md5 / x-amz-meta-md5 on multipart objects
PART_SIZE_METADATA = "md5-part-size"  # the part size that makes a multipart object's ETag
_HEX_MD5 = re.compile(r"^[0-9a-f]{32}$")


@dataclass(frozen=True)
class LocalFile:
    """One file to sync: its ``/``-separated path below the root, where it is, what it holds
    (``md5`` is None for a big file not hashed yet: see ``lazy_from`` in ``scan_local``)."""

    rel: str
    path: Path
    size: int
    md5: str | None
    mtime_ns: int = 0


class ContentDigests(Protocol):
    """Digests of local files computed on demand (and cached) for comparisons the plan needs."""

    def md5(self, file: LocalFile) -> str: ...

    def multipart_etag(self, file: LocalFile, part_size: int) -> str: ...


class CachedDigests:
    """``ContentDigests`` through a ``HashCache``; a file changed since the scan is read as it
    is now (so it compares unequal and is uploaded)."""

    def __init__(self, cache: HashCache) -> None:
        self.cache = cache

    def md5(self, file: LocalFile) -> str:
        return file.md5 or self.cache.md5(file.rel, file.path, os.stat(file.path))

    def multipart_etag(self, file: LocalFile, part_size: int) -> str:
        return self.cache.multipart_etag(file.rel, file.path, os.stat(file.path), part_size)


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
    secrets: tuple[str, ...] = field(default=())  # uploaded although they look like secrets
    withheld: tuple[str, ...] = field(default=())  # left out because they look like secrets

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
            noun = counted(count, noun).split(" ", 1)[1]
            return f"  {verb:<6} {count:>7} {noun:<7} {human_bytes(size):>10}  ({detail})"

        lines = [
            f"sync {printable(str(self.source))} -> {printable(str(self.dest.as_dir()))}",
            line("upload", len(self.uploads), "file", self.upload_bytes,
                 f"{new} new, {len(self.uploads) - new} changed"),
            line("skip", len(self.skipped), "file", self.skip_bytes, "unchanged"),
        ]  # fmt: skip
        if self.delete:
            lines.append(line("delete", len(self.extraneous), "object", extra, "not in source"))
        elif self.extraneous:
            lines.append(
                line("keep", len(self.extraneous), "object", extra, "not in source; --delete")
            )
        return lines

    def file_lines(self, limit: int | None = None) -> list[str]:
        """One line per file: its action (upload, delete, then skip: what changes comes first),
        size and path; with ``limit``, the first ``limit`` lines and a count of the rest."""
        prefix = self.dest.as_dir().key

        def line(action: str, size: int, path: str) -> str:
            return f"  {action:<16} {human_bytes(size):>10}  {printable(path)}"

        lines = [line(f"upload ({u.reason})", u.file.size, u.file.rel) for u in self.uploads]
        lines += [line("delete", o.size, o.key.removeprefix(prefix)) for o in self.deletes]
        if not self.delete:
            lines += [
                line("keep (--delete)", o.size, o.key.removeprefix(prefix)) for o in self.extraneous
            ]
        lines += [line("skip (unchanged)", f.size, f.rel) for f in self.skipped]
        if limit is None or len(lines) <= limit:
            return lines
        rest = len(lines) - limit
        return [*lines[:limit], f"  ... and {counted(rest, 'more file')} (-v lists them all)"]

    def warning_lines(self) -> list[str]:
        """One line for the files left out as secrets, one for those uploaded all the same."""
        lines = []
        if self.withheld:
            lines.append(withheld_line(self.withheld, "upload"))
        if self.secrets:
            lines.append(
                f"warning: uploading {counted(len(self.secrets), 'file')} that may hold "
                f"secrets: {head_of(self.secrets)}"
            )
        return lines


def scan_local(
    root: Path,
    extra_patterns: Iterable[str] = (),
    cache: HashCache | None = None,
    *,
    lazy_from: int | None = None,
    allow_secrets: bool = False,
    on_withheld: Callable[[str], None] | None = None,
) -> list[LocalFile]:
    """The files under ``root`` that are not ignored, hashed (through ``cache`` when given).
    Files of ``lazy_from`` bytes or more are not read: their MD5 is what the cache knows, or
    None. Files that look like secrets: see ``walk_files``."""
    cache = cache if cache is not None else HashCache(None)
    files = []
    walk = walk_files(root, extra_patterns, allow_secrets=allow_secrets, on_withheld=on_withheld)
    for rel in walk:
        path = root / rel
        try:
            stat = os.stat(path)
            if lazy_from is not None and stat.st_size >= lazy_from:
                md5 = cache.known_md5(rel, stat)
            else:
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
    digests: ContentDigests | None = None,
    withheld: Sequence[str] = (),
) -> SyncPlan:
    """Compare ``local`` with the ``remote`` listing of ``dest``. ``head`` is asked only for a
    same-size object whose listing carries no MD5 (a multipart ETag): its metadata tells the MD5
    or the part size. ``digests`` computes what the scan left out (big files); without it such
    a file is uploaded."""
    prefix = dest.as_dir().key
    remote_by_rel: dict[str, ObjectInfo] = {}
    for info in remote:
        if not info.key.startswith(prefix) or info.key.endswith("/"):
            continue  # outside the prefix, or a folder marker
        remote_by_rel[info.key[len(prefix) :]] = info

    uploads: list[PlannedUpload] = []
    skipped: list[LocalFile] = []
    for file in local:
        key = upload_key(dest, file.rel)  # every key is checked before anything is uploaded
        there = remote_by_rel.pop(file.rel, None)
        if there is None:
            uploads.append(PlannedUpload(file, key, "new"))
            continue
        if there.size == file.size and _same_content(file, there, head, digests):
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
        withheld=tuple(withheld),
    )


def _same_content(
    file: LocalFile,
    there: ObjectInfo,
    head: Callable[[str], ObjectInfo | None] | None,
    digests: ContentDigests | None,
) -> bool:
    """Whether the same-size object ``there`` holds what ``file`` holds."""
    info: ObjectInfo | None = there
    md5 = md5_of(there)
    if md5 is None and head is not None:
        info = head(there.key)
        md5 = md5_of(info) if info is not None else None
    if md5 is not None:
        local = file.md5 if file.md5 is not None or digests is None else digests.md5(file)
        return local == md5
    part_size = part_size_of(info) if info is not None else None
    if info is None or part_size is None or digests is None or "-" not in info.etag:
        return False  # nothing says what the object holds: upload it again
    return digests.multipart_etag(file, part_size) == info.etag.strip('"').lower()


def part_size_of(info: ObjectInfo) -> int | None:
    """The part size majob stored on a multipart object, when it did."""
    text = info.metadata.get(PART_SIZE_METADATA, "")
    return int(text) if text.isdigit() and int(text) > 0 else None

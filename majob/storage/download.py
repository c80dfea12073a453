"""Downloads: an object to a file, a prefix to a directory; atomic and MD5-checked.

Every key of a listing is checked before anything is written: a key that would land outside the
target directory (``..`` segments, an absolute path, a backslash, a drive letter, a NUL) makes the
whole download fail with ``StorageIntegrityError``. Each object is written to a temporary file
next to its target, its MD5 compared with the ETag (single PUT) or the ``md5`` metadata majob
stores on multipart objects when it knew it, else its multipart ETag compared with the one the
received data makes cut at the part size majob stores (``md5-part-size``), and only then renamed
into place.
"""

from __future__ import annotations

import contextlib
import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from majob.errors import StorageIntegrityError, UserInputError
from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.listing import list_folder
from majob.storage.localstate import file_md5, file_multipart_etag
from majob.storage.plan import md5_of, part_size_of
from majob.storage.pool import run_all
from majob.storage.ranged import RANGED_MIN, RangedStore, get_file_ranged
from majob.storage.targets import check_download_targets
from majob.storage.uri import ObsUri
from majob.text import printable

_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass
class DownloadResult:
    """What a download did; ``unverified`` lists keys whose MD5 the store did not tell."""

    downloaded: int = 0
    bytes: int = 0
    unverified: list[str] = field(default_factory=list)


def safe_relative_path(key: str, prefix: str, *, bucket: str | None = None) -> str:
    """``key`` below ``prefix`` as a relative path that stays inside a target directory, or a
    ``StorageIntegrityError`` naming the key."""
    rel = key[len(prefix) :] if key.startswith(prefix) else None
    problem = None
    if rel is None:
        problem = f"is not below the prefix {prefix!r}"
    elif not rel:
        problem = "is empty below the prefix"
    elif "\\" in rel:
        problem = "contains a backslash"
    elif "\x00" in rel:
        problem = "contains a NUL character"
    elif rel.startswith("/") or _DRIVE.match(rel):
        problem = "is an absolute path"
    elif any(part in ("", ".", "..") for part in rel.rstrip("/").split("/")):
        problem = "has an empty, '.' or '..' path segment"
    if problem:
        raise StorageIntegrityError(
            f"refusing to download key {key!r}: it {problem} and could be written outside the "
            "target directory",
            bucket=bucket,
            key=key,
        )
    assert rel is not None
    return rel


def download_object(
    store: ObjectStore,
    src: ObsUri,
    target: Path,
    *,
    parent_made: bool = False,
    size: int | None = None,
) -> tuple[ObjectInfo, bool]:
    """Download one object to ``target`` atomically; returns its info and whether its MD5 was
    verified (False when the store did not say it). ``parent_made``: the caller made
    ``target``'s folder (``make_parents``), the download does not ask again. ``size``: what a
    listing said of it; from ``ranged.RANGED_MIN`` on, a store that can (``RangedStore``)
    fetches it in parallel ranged GETs, checked the same way (``ranged.get_file_ranged``).

    The store writes the body to a temporary name beside ``target``, checks it against the MD5
    the object carries (its ETag, or majob's ``md5`` metadata) and renames it into place: one
    write and one hash of the bytes. Only an object that says no MD5 (a multipart upload) is
    checked afterwards, against the multipart ETag at majob's part size or the MD5 a HEAD tells;
    a file that fails that check is removed again."""
    if not parent_made:
        with _local_errors(target):
            target.parent.mkdir(parents=True, exist_ok=True)
    if size is not None and size >= RANGED_MIN and isinstance(store, RangedStore) and store.ranged:
        info, checked = get_file_ranged(store, src.bucket, src.key, target)
        if checked is not None:  # its MD5, or its multipart ETag: no MD5 of it made
            return info, True
    else:
        info = store.get_file(src.bucket, src.key, target)  # the store retries the request
    if md5_of(info) is not None:
        return info, True
    described: ObjectInfo | None = info
    if part_size_of(info) is None:
        described = store.head(src.bucket, src.key)
    expected = md5_of(described) if described is not None else None
    part_size = part_size_of(described) if described is not None else None
    if expected is not None:
        actual = file_md5(target)
    elif described is not None and part_size is not None and "-" in described.etag:
        expected = described.etag
        actual = file_multipart_etag(target, part_size)
    if expected is not None and actual != expected:
        with contextlib.suppress(OSError):
            target.unlink()
        raise StorageIntegrityError(
            f"downloaded data has digest {actual}, the object says {expected}",
            bucket=src.bucket,
            key=src.key,
        )
    return info, expected is not None


def download_tree(store: ObjectStore, src: ObsUri, dest: Path, *, jobs: int = 8) -> DownloadResult:
    """Download every object of the folder ``src`` names (``x/`` for ``obs://B/x``, never
    ``xy``) into ``dest`` (created if missing)."""
    prefix = src.as_dir().key
    listing = list_folder(store, src)
    objects = [o for o in listing if not o.key.endswith("/")]
    # Check every key and target first: a malicious listing, or a name this file system cannot
    # hold, fails before a single byte is written.
    rels = [safe_relative_path(o.key, prefix, bucket=src.bucket) for o in objects]
    refuse_file_dir_clashes(rels, src)
    check_download_targets(dest, rels, prefix)
    targets = [(o, dest / rel) for o, rel in zip(objects, rels, strict=True)]
    with _local_errors(dest):
        dest.mkdir(parents=True, exist_ok=True)
    result = DownloadResult()
    lock = threading.Lock()

    def fetch(item: tuple[ObjectInfo, Path]) -> None:
        info, target = item
        got, verified = download_object(store, ObsUri(src.bucket, info.key), target, size=info.size)
        with lock:
            result.downloaded += 1
            result.bytes += got.size
            if not verified:
                result.unverified.append(info.key)

    run_all(fetch, targets, jobs, "majob-get")
    result.unverified.sort()
    return result


def make_parents(dest: Path, rels: list[str]) -> None:
    """Make the folders the files ``rels`` land in below ``dest``: once each, not once a file."""
    folders = sorted({rel.rsplit("/", 1)[0] for rel in rels if "/" in rel})
    for folder in [dest, *(dest / name for name in folders)]:
        with _local_errors(folder):
            folder.mkdir(parents=True, exist_ok=True)


@contextlib.contextmanager
def _local_errors(target: Path) -> Iterator[None]:
    """A local problem (permissions, a full disk, a file where a directory must be) is the
    user's to fix: one clear error, not a traceback."""
    try:
        yield
    except OSError as error:
        raise UserInputError(
            f"cannot write {printable(str(target))}: {error.strerror or error}",
            hint="check the target directory",
        ) from None


def refuse_file_dir_clashes(rels: list[str], src: ObsUri) -> None:
    """``a`` and ``a/b`` cannot both be files on disk: refuse such a listing up front."""
    files = set(rels)
    for rel in rels:
        parent = rel.rsplit("/", 1)[0] if "/" in rel else ""
        while parent:
            if parent in files:
                raise StorageIntegrityError(
                    f"the listing holds both {parent!r} and {rel!r}: they cannot both be "
                    "files in the target directory",
                    bucket=src.bucket,
                    key=src.as_dir().key + parent,
                )
            parent = parent.rsplit("/", 1)[0] if "/" in parent else ""

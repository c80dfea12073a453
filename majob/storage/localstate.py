"""What sync remembers between runs, on the local disk: file hashes and unfinished uploads.

Both live under the user's cache directory (``storage/dirs.py``: ``$MAJOB_CACHE_DIR``, else
``$XDG_CACHE_HOME/majob``, else ``~/.cache/majob``), never inside the code being uploaded. Every
write is atomic (temp file, then rename) under a file lock, so a killed run or two runs at once
leave a readable file behind; an unreadable file is treated as empty (it is only a cache).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

# Re-exported ("as"): sync and the service's offerings cache find the cache dir here.
from majob.storage.dirs import default_cache_dir

HASH_CHUNK = 1 << 20
# A file modified this close to the moment it was hashed may change again within the same mtime
# tick ("racy git"); such hashes are used for this run but not remembered. The tick is the file
# system's: whole seconds where mtimes have no sub-second part (FAT keeps 2 s, HFS+ 1 s), else
# the kernel's coarse clock, a few ms (ext4, XFS, btrfs, APFS, NTFS). Waiting 2 s for every fresh
# file would make the sync after a first one read every file just written again.
COARSE_RACY_WINDOW_NS = 2_000_000_000
FINE_RACY_WINDOW_NS = 100_000_000


def file_md5(path: Path) -> str:
    """Hex MD5 of a file's content, read in 1 MiB chunks."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        while chunk := handle.read(HASH_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write_json_atomic(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"), sort_keys=True)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


LOCK_TIMEOUT = 60.0  # seconds another run may hold a file before this one gives up


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    """Hold ``<path>.lock``: ``flock`` on POSIX, the lock filelock takes there too (so runs of
    older versions still exclude this one), from the standard library: importing filelock
    costs ~45 ms of every sync's start-up (it loads asyncio). Elsewhere, filelock."""
    path.parent.mkdir(parents=True, exist_ok=True)
    lock_path = str(path) + ".lock"
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        from filelock import FileLock

        with FileLock(lock_path, timeout=LOCK_TIMEOUT):
            yield
        return
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        deadline = time.monotonic() + LOCK_TIMEOUT
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    raise TimeoutError(f"{lock_path} is held by another run") from None
                time.sleep(0.02)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock


class HashCache:
    """Digests of the files under one root, keyed by relative path and valid while the file's
    size, ``mtime_ns`` and inode are unchanged: the content MD5 and, for files sent in parts,
    the multipart ETag for a given part size. ``path=None`` keeps it in memory only.

    An entry is ``[size, mtime_ns, inode, md5 or "", {part size: multipart ETag}]`` (entries
    written before multipart ETags were cached have no fifth item).
    """

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._old: dict[str, list[Any]] = {}
        if path is not None:
            self._old = {k: v for k, v in _read_json(path).items() if _valid_entry(v)}
        self._new: dict[str, list[Any]] = {}
        self.hashed = 0  # files actually read this run (the rest came from the cache)

    @classmethod
    def for_root(cls, root: Path, cache_dir: Path | None = None) -> HashCache:
        """The cache file of the tree at ``root``, one per resolved absolute path."""
        name = hashlib.sha256(str(root.resolve()).encode("utf-8")).hexdigest()[:24]
        return cls((cache_dir or default_cache_dir()) / "hashes" / f"{name}.json")

    def _entry(self, rel: str, stat: os.stat_result) -> list[Any]:
        """This run's entry of ``rel`` (carried over from the file when still valid, else new);
        call with the lock held."""
        key = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
        entry = self._new.get(rel)
        if entry is not None and entry[:3] == key:
            return entry
        old = self._old.get(rel)
        if old is not None and old[:3] == key:
            entry = [*key, old[3], dict(old[4]) if len(old) > 4 else {}]
        else:
            entry = [*key, "", {}]
        return entry

    def known_md5(self, rel: str, stat: os.stat_result) -> str | None:
        """The MD5 of ``rel`` when the cache still holds it, without reading the file. What the
        cache knows of the file is kept for the next run either way."""
        with self._lock:
            entry = self._entry(rel, stat)
            if entry[3] or entry[4]:
                self._new[rel] = entry
        return str(entry[3]) or None

    def md5(self, rel: str, path: Path, stat: os.stat_result) -> str:
        """The hex MD5 of ``path`` (relative name ``rel``), from the cache when still valid."""
        known = self.known_md5(rel, stat)
        if known is not None:
            return known
        started = time.time_ns()
        digest = file_md5(path)
        with self._lock:
            self.hashed += 1
            if not _racy(stat, started):
                entry = self._entry(rel, stat)
                entry[3] = digest
                self._new[rel] = entry
        return digest

    def known_multipart_etag(self, rel: str, stat: os.stat_result, part_size: int) -> str | None:
        """The multipart ETag of ``rel`` sent in ``part_size`` parts, when cached."""
        with self._lock:
            etag = self._entry(rel, stat)[4].get(str(part_size))
        return str(etag) if etag else None

    def multipart_etag(self, rel: str, path: Path, stat: os.stat_result, part_size: int) -> str:
        """The ETag OBS gives ``path`` uploaded in ``part_size`` parts, from the cache when
        still valid, else read from the file (and remembered)."""
        known = self.known_multipart_etag(rel, stat, part_size)
        if known is not None:
            return known
        started = time.time_ns()
        etag = file_multipart_etag(path, part_size)
        with self._lock:
            self.hashed += 1
        if not _racy(stat, started):
            self.remember_multipart_etag(rel, stat, part_size, etag)
        return etag

    def remember_multipart_etag(
        self, rel: str, stat: os.stat_result, part_size: int, etag: str
    ) -> None:
        """Keep the multipart ETag an upload of ``rel`` (as ``stat`` describes it) produced."""
        if _racy(stat, time.time_ns()):
            return
        with self._lock:
            entry = self._entry(rel, stat)
            entry[4] = {**entry[4], str(part_size): etag}
            self._new[rel] = entry

    def save(self) -> None:
        """Remember this run's hashes (the files seen now replace what was stored)."""
        if self.path is None:
            return
        with self._lock:
            # Copies of the entries: a later digest of this run changes the lists in place.
            data = {rel: list(entry) for rel, entry in self._new.items()}
        if data == self._old:
            return  # a no-change run: the file already says this (and writing costs ~0.05 s)
        with _locked(self.path):
            _write_json_atomic(self.path, data)
        self._old = data  # a second save (after the uploads) writes only what they added


def _racy(stat: os.stat_result, hashed_at_ns: int) -> bool:
    """Modified so close to ``hashed_at_ns`` that the same mtime may hide another change (an
    mtime from another machine's clock, on a network file system, is trusted to within the
    window: NTP keeps clocks far closer)."""
    return racy_mtime(stat.st_mtime_ns, hashed_at_ns)


def racy_mtime(mtime_ns: int, hashed_at_ns: int) -> bool:
    """``_racy`` on the numbers: an mtime in whole seconds comes from a file system that keeps no
    more, whose tick may be 2 s; one with a sub-second part, from one that ticks in ms."""
    window = FINE_RACY_WINDOW_NS if mtime_ns % 1_000_000_000 else COARSE_RACY_WINDOW_NS
    return mtime_ns > hashed_at_ns - window


def part_md5(path: Path, offset: int, size: int) -> bytes:
    """The MD5 digest of ``size`` bytes of ``path`` from ``offset``."""
    digest = hashlib.md5()
    with open(path, "rb") as handle:
        handle.seek(offset)
        left = size
        while left > 0:
            chunk = handle.read(min(left, HASH_CHUNK))
            if not chunk:
                raise OSError(f"{path} is shorter than expected (changed while it was read)")
            digest.update(chunk)
            left -= len(chunk)
    return digest.digest()


def file_multipart_etag(path: Path, part_size: int) -> str:
    """``md5(md5(part 1) || md5(part 2) ...)-N`` of ``path`` cut in ``part_size`` parts."""
    size = os.stat(path).st_size
    count = max(1, -(-size // part_size))
    digests = b"".join(
        part_md5(path, n * part_size, min(part_size, size - n * part_size)) for n in range(count)
    )
    return f"{hashlib.md5(digests).hexdigest()}-{count}"


def _valid_entry(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) in (4, 5)
        and all(isinstance(v, int) for v in value[:3])
        and isinstance(value[3], str)
        and (len(value) == 4 or isinstance(value[4], dict))
    )


@dataclass(frozen=True)
class UploadRecord:
    """A multipart upload majob started and has not finished: resumed only for the same key,
    size and part size (and MD5, when it was known), each stored part reused only when its ETag
    is the MD5 of the same bytes of the local file. ``md5`` is "" when it was not known."""

    bucket: str
    key: str
    upload_id: str
    size: int
    md5: str
    part_size: int


class UploadRecords:
    """Unfinished multipart uploads, in one JSON file under the cache dir, shared by all runs."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_cache_dir() / "uploads.json"

    @staticmethod
    def _id(bucket: str, key: str) -> str:
        return f"{bucket}/{key}"

    def find(self, bucket: str, key: str) -> UploadRecord | None:
        entry = _read_json(self.path).get(self._id(bucket, key))
        if not isinstance(entry, dict):
            return None
        try:
            return UploadRecord(**entry)
        except TypeError:
            return None

    def put(self, record: UploadRecord) -> None:
        with _locked(self.path):
            data = _read_json(self.path)
            data[self._id(record.bucket, record.key)] = asdict(record)
            _write_json_atomic(self.path, data)

    def drop(self, bucket: str, key: str, upload_id: str | None = None) -> None:
        """Forget the record of ``key`` (only if it names ``upload_id``, when given)."""
        with _locked(self.path):
            data = _read_json(self.path)
            entry = data.get(self._id(bucket, key))
            if entry is None:
                return
            if (
                upload_id is not None
                and isinstance(entry, dict)
                and entry.get("upload_id") != upload_id
            ):
                return
            del data[self._id(bucket, key)]
            _write_json_atomic(self.path, data)

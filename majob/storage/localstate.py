"""What sync remembers between runs, on the local disk: file hashes and unfinished uploads.

Both live under the user's cache directory (``$MAJOB_CACHE_DIR``, else
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

from filelock import FileLock

HASH_CHUNK = 1 << 20
# A file modified this close to the moment it was hashed may change again within the same mtime
# tick ("racy git"); such hashes are used for this run but not remembered.
RACY_WINDOW_NS = 2_000_000_000


def default_cache_dir() -> Path:
    """Where majob keeps its caches for this user."""
    explicit = os.environ.get("MAJOB_CACHE_DIR")
    if explicit:
        return Path(explicit)
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "majob"


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


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(str(path) + ".lock", timeout=60):
        yield


class HashCache:
    """MD5s of the files under one root, keyed by relative path and valid while the file's size,
    ``mtime_ns`` and inode are unchanged. ``path=None`` keeps it in memory only."""

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

    def md5(self, rel: str, path: Path, stat: os.stat_result) -> str:
        """The hex MD5 of ``path`` (relative name ``rel``), from the cache when still valid."""
        key = [stat.st_size, stat.st_mtime_ns, stat.st_ino]
        with self._lock:
            entry = self._old.get(rel)
        if entry is not None and entry[:3] == key:
            digest = str(entry[3])
        else:
            started = time.time_ns()
            digest = file_md5(path)
            with self._lock:
                self.hashed += 1
            if stat.st_mtime_ns > started - RACY_WINDOW_NS:
                return digest
        with self._lock:
            self._new[rel] = [*key, digest]
        return digest

    def save(self) -> None:
        """Remember this run's hashes (the files seen now replace what was stored)."""
        if self.path is None:
            return
        with self._lock:
            data = dict(self._new)
        with _locked(self.path):
            _write_json_atomic(self.path, data)


def _valid_entry(value: object) -> bool:
    return (
        isinstance(value, list)
        and len(value) == 4
        and all(isinstance(v, int) for v in value[:3])
        and isinstance(value[3], str)
    )


@dataclass(frozen=True)
class UploadRecord:
    """A multipart upload majob started and has not finished: resumed only for the same key,
    size, MD5 and part size."""

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

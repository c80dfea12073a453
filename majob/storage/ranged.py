"""A large object into a file by parallel ranged GETs, verified, resumable (issue 38).

::

    HEAD (ETag, size, md5 / md5-part-size) --> pieces [a, b) x STREAMS threads: GET Range:
    bytes=a-(b-1), If-Match: ETag --> os.pwrite into one preallocated temporary file, the part
    MD5s of the piece on the way, one journal line --> checked --> renamed into place

The check: a multipart object whose part size is known (majob's ``md5-part-size``) by its
multipart ETag (pieces start on part boundaries, so each piece's part MD5s are made on the
thread that received it), even when it also says its whole MD5; otherwise the one
``obs_answers.write_body`` makes on a single GET, the MD5 the object says (its ETag, or majob's
``md5`` metadata), made in order by a thread reading the landed pieces back as they complete
contiguously.

- A piece that fails half-way is sent again (the store's retry rule); its bytes are written at
  the same offsets, its part MD5s made again.
- The object changing between pieces answers 412 to ``If-Match``: the pieces are dropped and the
  object is fetched again in one GET (as a single GET would have seen it: the caller compares its
  new ETag with the listing's and calls the source changed).
- Killed (SIGKILL) half-way: the temporary file ``.<name>.<hash>.majob-ranged`` and its journal
  (``...majob-ranged.json``: the object's ETag, size, piece size, then one line per landed piece)
  stay; the next download of the same object with the same ETag fetches the missing pieces only.
  The landed pieces are read back for the whole MD5 and their part MD5s, so a resumed file is
  checked from its bytes on disk as a fresh one is. Those of an object that is gone or changed
  by the next run are majob's to remove (``is_temp_name``: a stage does, once its copy is done).
"""

from __future__ import annotations

import contextlib
import hashlib
import http.client
import json
import os
import re
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, TypeVar, runtime_checkable

from majob.errors import StorageError, StorageIntegrityError, StorageNotFound
from majob.storage.base import ObjectInfo
from majob.storage.obs_answers import READ_CHUNK, PartDigests, multipart_etag
from majob.storage.obs_failures import malformed
from majob.storage.plan import md5_of, part_size_of
from majob.storage.pool import run_all

T = TypeVar("T")
MiB = 1 << 20
RANGED_MIN = 32 * MiB  # objects from this size are fetched in pieces
STREAMS = 4  # pieces in flight at once (rclone's --multi-thread-streams default)
PIECE_MIN = 8 * MiB
MAX_PIECES = 64
_CONTENT_RANGE = re.compile(r"bytes (\d+)-(\d+)/(\d+)")
_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0)


@runtime_checkable
class RangedStore(Protocol):
    """What a ranged download needs of a store (``ObsObjectStore``)."""

    @property
    def ranged(self) -> bool: ...

    def head(self, bucket: str, key: str) -> ObjectInfo | None: ...

    def get_file(self, bucket: str, key: str, path: Path) -> ObjectInfo: ...

    def get_range(
        self, bucket: str, key: str, span: tuple[int, int], etag: str, read: Callable[[Any], T]
    ) -> T: ...


@dataclass(frozen=True)
class Plan:
    """How an object is cut: ``piece`` bytes a GET; ``part_size`` when it is checked by its
    multipart ETag (pieces are then whole parts)."""

    size: int
    piece: int
    part_size: int | None

    @classmethod
    def of(cls, info: ObjectInfo) -> Plan:
        # A multipart object with its part size is checked by its parts even when it also says
        # its whole MD5 (majob's uploads say both): the part MD5s are made on the threads that
        # receive the pieces, where the whole MD5 is one thread reading the file back in order
        # (about 1.7 s of one core for 1 GiB on this machine, the stage's slowest step).
        part = part_size_of(info) if "-" in info.etag else None
        piece = max(PIECE_MIN, -(-info.size // MAX_PIECES))
        if part:
            piece = -(-piece // part) * part
        return cls(info.size, piece, part)

    def spans(self) -> list[tuple[int, int]]:
        return [(a, min(a + self.piece, self.size)) for a in range(0, self.size, self.piece)]


def get_file_ranged(
    store: RangedStore,
    bucket: str,
    key: str,
    path: Path,
    *,
    streams: int = STREAMS,
    on_piece: Callable[[int], None] | None = None,
) -> tuple[ObjectInfo, str | None]:
    """Download ``key`` to ``path`` atomically in pieces (see the module's docstring); an object
    under ``RANGED_MIN`` in one GET. Returns the object and the digest its bytes were checked
    against (its MD5, or its multipart ETag), None when it says none (another tool's multipart
    upload, or a single GET whose object says no MD5). ``on_piece(index)``: a piece landed."""
    info = store.head(bucket, key)
    if info is None:
        raise StorageNotFound("download object: no such object", bucket=bucket, key=key)
    if info.size >= RANGED_MIN:
        temp = _temp_name(path)
        try:
            return _fetch(store, bucket, info, path, temp, streams, on_piece)
        except StorageError as error:
            if error.status != 412:
                raise
        _discard(temp)  # it changed between two pieces: the object as it is now, in one GET
    got = store.get_file(bucket, key, path)
    return got, md5_of(got)


def _fetch(
    store: RangedStore,
    bucket: str,
    info: ObjectInfo,
    path: Path,
    temp: str,
    streams: int,
    on_piece: Callable[[int], None] | None,
) -> tuple[ObjectInfo, str | None]:
    plan = Plan.of(info)
    spans = plan.spans()
    with _local_errors(path):
        landed = _resume(temp, info, plan)
        fd = os.open(temp, _FLAGS, 0o666)
    digests: list[list[bytes]] = [[] for _ in spans]
    where = (bucket, info.key, path)
    by_md5 = plan.part_size is None and md5_of(info) is not None
    hasher = InOrderHasher(fd, spans) if by_md5 else None
    try:
        with _local_errors(path):
            os.ftruncate(fd, info.size)
        with open(temp + ".json", "a", encoding="utf-8") as journal:
            lock = threading.Lock()

            def fetch(index: int) -> None:
                if index in landed:  # by an earlier run: its part MD5s from the disk
                    if plan.part_size is not None:
                        digests[index] = _digests_back(fd, spans[index], plan.part_size)
                else:
                    digests[index] = store.get_range(
                        bucket, info.key, spans[index], info.etag,
                        lambda answer: _receive(answer, fd, spans[index], plan, where),
                    )  # fmt: skip
                    with lock:
                        journal.write(json.dumps({"piece": index}) + "\n")
                        journal.flush()
                if hasher is not None:
                    hasher.landed(index)
                if on_piece is not None:
                    on_piece(index)

            if hasher is not None:
                hasher.start()
            run_all(fetch, list(range(len(spans))), streams, "majob-range")
        md5 = hasher.result() if hasher is not None else None
    finally:
        if hasher is not None:
            hasher.stop()
        os.close(fd)
    return _checked(bucket, info, plan, (path, temp), md5, [d for ds in digests for d in ds])


def _checked(
    bucket: str,
    info: ObjectInfo,
    plan: Plan,
    paths: tuple[Path, str],
    md5: str | None,
    digests: list[bytes],
) -> tuple[ObjectInfo, str | None]:
    """The landed file checked as ``write_body`` checks one GET (the MD5 the object says, else
    its multipart ETag at majob's part size), then renamed into place."""
    path, temp = paths
    expected, actual = md5_of(info), md5
    said = "the ETag" if expected == info.etag else "the md5 the object carries"
    if plan.part_size is not None:
        expected, actual, said = info.etag, multipart_etag(digests), "the multipart ETag"
    if expected is not None and expected != actual:
        _discard(temp)
        raise StorageIntegrityError(
            f"download object: the MD5 of the received data does not match {said}",
            bucket=bucket,
            key=info.key,
        )
    with _local_errors(path):
        os.replace(temp, path)
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temp + ".json")
    return info, expected


def _receive(
    answer: Any, fd: int, span: tuple[int, int], plan: Plan, where: tuple[str, str, Path]
) -> list[bytes]:
    """Write a 206 answer's body at its offsets; the part MD5s of the piece (none when the
    object is not checked by its parts). ``where``: the bucket, the key, the target."""
    bucket, key, path = where
    start, stop = span
    found = _CONTENT_RANGE.fullmatch(answer.getheader("content-range") or "")
    if answer.status != 206 or found is None or _span_of(found) != (start, stop, plan.size):
        what = f"an answer to the range {start}-{stop - 1}"
        raise malformed("download object", what, bucket=bucket, key=key)
    parts = PartDigests(plan.part_size) if plan.part_size else None
    view = memoryview(bytearray(READ_CHUNK))
    offset = start
    while offset < stop and (count := answer.readinto(view[: stop - offset])):
        if parts is not None:
            parts.update(view[:count])
        with _local_errors(path):
            _pwrite_all(fd, view[:count], offset)
        offset += count
    if offset != stop:
        raise http.client.IncompleteRead(b"", stop - offset)
    return parts.finished() if parts is not None else []


def _span_of(found: re.Match[str]) -> tuple[int, int, int]:
    first, last, total = (int(found.group(n)) for n in (1, 2, 3))
    return first, last + 1, total


def _pwrite_all(fd: int, data: memoryview, offset: int) -> None:
    while data:
        written = os.pwrite(fd, data, offset)
        data, offset = data[written:], offset + written


def _digests_back(fd: int, span: tuple[int, int], part_size: int) -> list[bytes]:
    """The part MD5s of a piece already on disk."""
    parts = PartDigests(part_size)
    for chunk in _read_back(fd, span):
        parts.update(chunk)
    return parts.finished()


class InOrderHasher(threading.Thread):
    """The whole file's MD5 (for an object that says one), read back piece by piece as the
    pieces land in order: the bytes are in the page cache, and MD5 and ``pread`` let the
    receiving threads run meanwhile."""

    def __init__(self, fd: int, spans: list[tuple[int, int]]) -> None:
        super().__init__(name="majob-range-md5", daemon=True)
        self._fd, self._spans = fd, spans
        self._ready: set[int] = set()
        self._cond = threading.Condition()
        self._stopped = False
        self._md5 = hashlib.md5()
        self._error: BaseException | None = None

    def landed(self, index: int) -> None:
        with self._cond:
            self._ready.add(index)
            self._cond.notify()

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify()
        if self.is_alive():
            self.join()

    def run(self) -> None:
        try:
            for index, span in enumerate(self._spans):
                with self._cond:
                    while index not in self._ready and not self._stopped:
                        self._cond.wait()
                    if index not in self._ready:
                        return
                for chunk in _read_back(self._fd, span):
                    self._md5.update(chunk)
        except BaseException as error:  # handed to the caller by result()
            self._error = error

    def result(self) -> str:
        """The MD5, once every piece landed."""
        self.join()
        if self._error is not None:
            raise self._error
        return self._md5.hexdigest()


def _read_back(fd: int, span: tuple[int, int]) -> Iterator[memoryview]:
    buffer = memoryview(bytearray(READ_CHUNK))
    offset, stop = span
    while offset < stop:
        count = os.preadv(fd, [buffer[: min(READ_CHUNK, stop - offset)]], offset)
        if count <= 0:
            raise OSError(f"the temporary file ended at {offset}, before {stop}")
        yield buffer[:count]
        offset += count


def _temp_name(path: Path) -> str:
    """The temporary file beside ``path``: the same name each run, so a killed run's pieces
    are found again (the hash keeps two long names apart)."""
    folder, name = os.path.split(os.fspath(path))
    tag = hashlib.sha256(name.encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return os.path.join(folder, f".{name[:40]}.{tag}.majob-ranged")


_TEMP = re.compile(r"\.(.+)\.([0-9a-f]{12})\.majob-ranged(?:\.json)?", re.DOTALL)


def is_temp_name(name: str) -> bool:
    """Whether ``name`` is one of ``_temp_name``'s (the temporary file or its journal): the
    hash must be the one of the name in it, unless that name is the 40 characters a longer
    name is cut to."""
    found = _TEMP.fullmatch(name)
    if found is None or len(found[1]) > 40:
        return False
    tag = hashlib.sha256(found[1].encode("utf-8", "surrogateescape")).hexdigest()[:12]
    return tag == found[2] or len(found[1]) == 40


def _resume(temp: str, info: ObjectInfo, plan: Plan) -> set[int]:
    """The pieces an earlier run landed in ``temp`` for this very object (ETag, size, cut);
    otherwise none, and ``temp`` and its journal start afresh."""
    head = {"etag": info.etag, "size": info.size, "piece": plan.piece, "part": plan.part_size}
    try:
        with open(temp + ".json", encoding="utf-8") as journal:
            lines = journal.read().splitlines()
        if lines and json.loads(lines[0]) == head and os.stat(temp).st_size == info.size:
            return {_piece(line) for line in lines[1:]} - {-1}
    except (OSError, ValueError):
        pass
    _discard(temp)
    with open(temp + ".json", "w", encoding="utf-8") as journal:
        journal.write(json.dumps(head) + "\n")
    return set()


def _piece(line: str) -> int:
    """The piece a journal line names; -1 for a torn last line."""
    try:
        index = json.loads(line)["piece"]
    except (ValueError, KeyError, TypeError):
        return -1
    return index if isinstance(index, int) else -1


def _discard(temp: str) -> None:
    for name in (temp, temp + ".json"):
        with contextlib.suppress(FileNotFoundError):
            os.unlink(name)


@contextlib.contextmanager
def _local_errors(path: Path) -> Iterator[None]:
    """A failure of the local disk is a ``StorageError`` naming the path, its ``OSError`` the
    cause (not a network failure: not sent again), as ``write_body`` says it."""
    try:
        yield
    except OSError as error:
        raise StorageError(
            f"download object: cannot write {path} ({error.strerror or error})",
            hint="check the free space and permissions of the destination",
        ) from error

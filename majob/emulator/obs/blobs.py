"""Object bodies of the fake OBS: ``Blob`` (bytes in memory, a file, or the parts of a multipart
object), ``BlobWriter`` (a body as it arrives) and ``BlobRange`` (a pinned read).

A blob's file is deleted when its object is overwritten or deleted, but a GET that started
before must still send the version it started with, whole (OBS does). So a reader *pins* the
blob's files before it streams; a discarded blob whose files are pinned is deleted only when the
last reader lets go.
"""

from __future__ import annotations

import hashlib
import io
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, BinaryIO

INLINE_LIMIT = 64 * 1024  # bodies up to this size stay in memory (and in the journal)
READ_CHUNK = 1 << 20

_pins_lock = threading.Lock()  # guards every blob's pin count and doomed flag


@dataclass(eq=False)
class Blob:
    """The bytes of an object or a part: in memory, a file this model owns, or the blobs of the
    parts a multipart object was joined from (``pieces``, in order: joining copies nothing).

    ``md5`` is the MD5 digest of the bytes, or ``b""`` for a joined object (whose ETag is made
    of its parts' MD5s, not of its content's).
    """

    size: int
    md5: bytes
    data: bytes | None = None
    path: Path | None = None
    pieces: tuple[Blob, ...] = ()
    _pins: int = field(default=0, repr=False)
    _doomed: bool = field(default=False, repr=False)

    @classmethod
    def joined(cls, pieces: Sequence[Blob]) -> Blob:
        return cls(sum(p.size for p in pieces), b"", pieces=tuple(pieces))

    @classmethod
    def of(cls, data: bytes) -> Blob:
        """An in-memory blob holding ``data``."""
        return cls(len(data), hashlib.md5(data).digest(), data=data)

    def open(self) -> BinaryIO:
        if self.pieces:
            return io.BufferedReader(_PiecesReader(self))
        if self.path is not None:
            return self.path.open("rb")
        return io.BytesIO(self.data or b"")

    def leaves(self) -> Iterator[Blob]:
        """The blobs that hold bytes (this one, or its pieces')."""
        if self.pieces:
            for piece in self.pieces:
                yield from piece.leaves()
        else:
            yield self

    def files(self) -> Iterator[Path]:
        """The files holding this blob's bytes."""
        for leaf in self.leaves():
            if leaf.path is not None:
                yield leaf.path

    def read_range(self, start: int, length: int) -> Iterator[bytes]:
        """Yield the bytes ``[start, start + length)`` in chunks of at most 1 MiB."""
        if self.pieces:
            for piece in self.pieces:
                if length <= 0:
                    return
                if start >= piece.size:
                    start -= piece.size
                    continue
                take = min(length, piece.size - start)
                yield from piece.read_range(start, take)
                start, length = 0, length - take
            return
        if self.path is None:
            view = memoryview(self.data or b"")
            for offset in range(start, start + length, READ_CHUNK):
                yield bytes(view[offset : min(offset + READ_CHUNK, start + length)])
            return
        with self.path.open("rb") as handle:
            handle.seek(start)
            left = length
            while left > 0:
                chunk = handle.read(min(left, READ_CHUNK))
                if not chunk:
                    break
                left -= len(chunk)
                yield chunk

    def pin(self) -> None:
        """Keep this blob's files until ``unpin``, even if it is discarded meanwhile."""
        with _pins_lock:
            for leaf in self.leaves():
                leaf._pins += 1

    def unpin(self) -> None:
        doomed: list[Path] = []
        with _pins_lock:
            for leaf in self.leaves():
                leaf._pins -= 1
                if leaf._pins == 0 and leaf._doomed and leaf.path is not None:
                    doomed.append(leaf.path)
        for path in doomed:
            path.unlink(missing_ok=True)

    def discard(self) -> None:
        """Delete the files now, or when the last reader unpins them."""
        doomed: list[Path] = []
        with _pins_lock:
            for leaf in self.leaves():
                if leaf._pins:
                    leaf._doomed = True
                elif leaf.path is not None:
                    doomed.append(leaf.path)
        for path in doomed:
            path.unlink(missing_ok=True)


class BlobRange:
    """``[start, start + length)`` of a blob pinned at creation: iterate it once to stream the
    bytes; the pin is released when the iteration ends or on ``close``."""

    def __init__(self, blob: Blob, start: int, length: int) -> None:
        blob.pin()
        self._blob: Blob | None = blob
        self.start = start
        self.length = length

    def __iter__(self) -> Iterator[bytes]:
        blob = self._blob
        if blob is None:
            return
        try:
            yield from blob.read_range(self.start, self.length)
        finally:
            self.close()

    def close(self) -> None:
        if self._blob is not None:
            blob, self._blob = self._blob, None
            blob.unpin()


class _PiecesReader(io.RawIOBase):
    """A joined blob read front to back as one stream."""

    def __init__(self, blob: Blob) -> None:
        self._chunks = blob.read_range(0, blob.size)
        self._held = b""

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: Any) -> int:
        while not self._held:
            self._held = next(self._chunks, b"")
            if not self._held:
                return 0
        count = min(len(buffer), len(self._held))
        buffer[:count] = self._held[:count]
        self._held = self._held[count:]
        return count


class BlobWriter:
    """Accepts a body chunk by chunk, hashing it, then becomes a ``Blob``.

    Bodies stay in memory unless ``spill_to`` is given and they outgrow ``INLINE_LIMIT``; then
    they are written to that file as they arrive (so a 512 MiB upload never sits in memory).
    """

    def __init__(self, spill_to: Path | None = None) -> None:
        self._spill_to = spill_to
        self._md5 = hashlib.md5()
        self._size = 0
        self._chunks: list[bytes] = []
        self._handle: BinaryIO | None = None

    def write(self, chunk: bytes) -> None:
        self._md5.update(chunk)
        self._size += len(chunk)
        if self._handle is not None:
            self._handle.write(chunk)
            return
        self._chunks.append(chunk)
        if self._spill_to is not None and self._size > INLINE_LIMIT:
            self._handle = self._spill_to.open("wb")
            for held in self._chunks:
                self._handle.write(held)
            self._chunks.clear()

    def finish(self) -> Blob:
        if self._handle is not None:
            self._handle.close()
            return Blob(self._size, self._md5.digest(), path=self._spill_to)
        return Blob(self._size, self._md5.digest(), data=b"".join(self._chunks))

    def abandon(self) -> None:
        if self._handle is not None:
            self._handle.close()
            assert self._spill_to is not None
            self._spill_to.unlink(missing_ok=True)
        self._chunks.clear()

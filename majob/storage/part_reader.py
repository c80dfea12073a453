"""``PartReader``: a byte range of a file, read once and hashed as the SDK sends it.

A part sent this way is read in one pass: each chunk goes into one reused buffer, is added to
the MD5 and handed to the connection, so hashing overlaps with sending and no part sits in
memory (one buffer of ``READ_CHUNK`` per part in flight). The digest is then that of exactly the
bytes sent; the store compares it with the ETag the server computed from what it received.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

from majob.errors import StorageIntegrityError

READ_CHUNK = 1 << 20


class PartReader:
    """``size`` bytes of ``path`` from ``offset`` as a readable stream (what the SDK's
    ``uploadPart`` reads from). A file that is shorter than that (it changed) is a
    ``StorageIntegrityError``, never a short body."""

    def __init__(self, path: Path, offset: int, size: int, *, chunk: int = READ_CHUNK) -> None:
        self._path = path
        try:
            self._handle = open(path, "rb", buffering=0)  # noqa: SIM115 - closed by close()
        except OSError as error:
            raise self._changed(str(error)) from None
        try:
            self._handle.seek(offset)
        except BaseException:
            self._handle.close()
            raise
        self._left = size
        self._view = memoryview(bytearray(max(1, min(chunk, size))))
        self._digest = hashlib.md5()
        self.sent = 0

    def read(self, size: int = -1) -> memoryview:
        """The next chunk (at most ``size`` bytes): a view of the reused buffer, valid until the
        next call, as the SDK sends each chunk before it reads the next."""
        want = self._left if size < 0 else min(size, self._left)
        want = min(want, len(self._view))
        if want <= 0:
            return self._view[:0]
        try:
            got = self._handle.readinto(self._view[:want])
        except OSError as error:
            raise self._changed(str(error)) from None
        if not got:
            raise self._changed("it is shorter than it was")
        chunk = self._view[:got]
        self._digest.update(chunk)
        self._left -= got
        self.sent += got
        return chunk

    def md5(self) -> str:
        """Hex MD5 of the bytes read so far."""
        return self._digest.hexdigest()

    def close(self) -> None:
        self._handle.close()

    def __enter__(self) -> PartReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _changed(self, why: str) -> StorageIntegrityError:
        return StorageIntegrityError(
            f"cannot read {self._path} ({why}): it changed or went away while it was sent; "
            "sync again"
        )

"""The additional checksums S3 (and so boto3, which sends CRC32 by default) puts on a body:
``x-amz-checksum-{crc32,crc32c,sha1,sha256}``, as a header or as an ``aws-chunked`` trailer.

A value that is not the base64 of a digest of the right size is ``400 InvalidRequest``; one that
does not match the body received is ``400 BadDigest``; both are S3's answers.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import zlib
from collections.abc import Callable, Mapping
from typing import Protocol

from majob.emulator.obs.errors import ObsServiceError, invalid_request

PREFIX = "x-amz-checksum-"


class _Digest(Protocol):
    def update(self, data: bytes, /) -> object: ...
    def digest(self) -> bytes: ...


class _Crc32:
    def __init__(self) -> None:
        self._value = 0

    def update(self, data: bytes) -> None:
        self._value = zlib.crc32(data, self._value)

    def digest(self) -> bytes:
        return self._value.to_bytes(4, "big")


class _Crc32c:
    def __init__(self) -> None:
        import crc32c  # the C implementation; pure Python would take seconds per MiB

        self._hash = crc32c.CRC32CHash()

    def update(self, data: bytes) -> None:
        self._hash.update(data)

    def digest(self) -> bytes:
        return bytes(self._hash.digest())


ALGORITHMS: dict[str, tuple[Callable[[], _Digest], int]] = {
    "crc32": (_Crc32, 4),
    "crc32c": (_Crc32c, 4),
    "sha1": (hashlib.sha1, 20),
    "sha256": (hashlib.sha256, 32),
}


# x-amz-checksum-* headers that are not a body's checksum, and CRC64NVME, which is accepted
# without being verified (no small library computes it; botocore sends it only with awscrt).
_NOT_A_CHECKSUM = frozenset({"type", "algorithm", "mode"})
_UNVERIFIED = "crc64nvme"


class ChecksumCheck:
    """Follows a request body and checks it against the checksum its headers announce, sent in
    the headers or announced by ``x-amz-trailer`` and sent after the body."""

    def __init__(self, headers: Mapping[str, str]) -> None:
        named = [
            name
            for name in headers
            if name.startswith(PREFIX) and name[len(PREFIX) :] not in _NOT_A_CHECKSUM
        ]
        trailer = headers.get("x-amz-trailer", "").strip().lower()
        if trailer:
            algorithm = trailer.removeprefix(PREFIX)
            if not trailer.startswith(PREFIX) or algorithm not in {*ALGORITHMS, _UNVERIFIED}:
                raise invalid_request(
                    f"The value specified in the x-amz-trailer header is not supported: {trailer}"
                )
            named.append(trailer)
        if len(named) > 1:
            raise invalid_request(
                "Expecting a single x-amz-checksum- header. Multiple checksum Types are not "
                "allowed."
            )
        self.header = named[0] if named and not named[0].endswith(_UNVERIFIED) else None
        self.in_trailer = bool(trailer)
        self._claimed = None if self.in_trailer or self.header is None else headers[self.header]
        self._digest: _Digest | None = None
        if self.header is not None:
            algorithm = self.header[len(PREFIX) :]
            if algorithm not in ALGORITHMS:
                raise invalid_request(f"Value for {self.header} header is invalid.")
            self._digest = ALGORITHMS[algorithm][0]()
            if self._claimed is not None:
                self._decode(self._claimed)  # a malformed value is refused before the body

    def _decode(self, claimed: str) -> bytes:
        assert self.header is not None
        size = ALGORITHMS[self.header[len(PREFIX) :]][1]
        try:
            value = base64.b64decode(claimed.strip(), validate=True)
        except (binascii.Error, ValueError):
            value = b""
        if len(value) != size:
            raise invalid_request(f"Value for {self.header} header is invalid.")
        return value

    def update(self, chunk: bytes) -> None:
        if self._digest is not None:
            self._digest.update(chunk)

    def verify(self, trailers: Mapping[str, str]) -> None:
        """After the whole body: raise unless the checksum matches."""
        if self.header is None or self._digest is None:
            return
        claimed = trailers.get(self.header) if self.in_trailer else self._claimed
        if claimed is None:
            raise invalid_request(f"The {self.header} trailer was announced but not sent.")
        if self._decode(claimed) != self._digest.digest():
            algorithm = self.header[len(PREFIX) :].upper()
            raise ObsServiceError(
                400,
                "BadDigest",
                f"The {algorithm} you specified did not match the calculated checksum.",
            )

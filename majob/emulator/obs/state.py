"""The state of the fake OBS: buckets, objects, parts and uploads, and OBS's limits on them.
Plain records; ``models.ObsBackend`` changes them, ``journal.Journal`` persists them."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from majob.emulator.obs.blobs import Blob
from majob.emulator.obs.errors import ObsServiceError
from majob.storage.uri import MAX_KEY_BYTES

MIN_PART_SIZE = 100 * 1024  # OBS: every part but the last is at least 100 KiB (S3 says 5 MiB)
MAX_PART_SIZE = 5 * 1024**3
MAX_PARTS = 10_000
MAX_KEYS = 1000
MAX_DELETE_KEYS = 1000


@dataclass
class FakeObject:
    key: str
    blob: Blob
    etag: str  # without quotes
    last_modified: float
    content_type: str = "binary/octet-stream"
    metadata: dict[str, str] = field(default_factory=dict)
    # The representation headers OBS keeps and returns (Cache-Control, Content-Disposition,
    # Content-Encoding, Content-Language, Expires), by their canonical names.
    headers: dict[str, str] = field(default_factory=dict)
    storage_class: str = "STANDARD"
    # The object's tag set (PutObjectTagging, x-amz-tagging): kept with this version only.
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def size(self) -> int:
        return self.blob.size

    def part_ranges(self) -> list[tuple[int, int]]:
        """``(start, length)`` of each part a multipart upload joined; empty for an object
        stored by one PUT or a copy (which OBS and S3 serve as one part)."""
        ranges, start = [], 0
        for piece in self.blob.pieces:
            ranges.append((start, piece.size))
            start += piece.size
        return ranges


@dataclass(frozen=True)
class ObjectAttributes:
    """What a PUT, an initiated upload or a copy sets besides the bytes."""

    content_type: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    storage_class: str = "STANDARD"
    tags: Mapping[str, str] = field(default_factory=dict)


@dataclass
class FakePart:
    number: int
    blob: Blob
    etag: str
    last_modified: float

    @property
    def size(self) -> int:
        return self.blob.size


@dataclass
class FakeUpload:
    upload_id: str
    key: str
    initiated: float
    content_type: str
    metadata: dict[str, str]
    parts: dict[int, FakePart] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)
    storage_class: str = "STANDARD"
    tags: dict[str, str] = field(default_factory=dict)


@dataclass
class FakeBucket:
    name: str
    created: float
    location: str
    objects: dict[str, FakeObject] = field(default_factory=dict)
    sorted_keys: list[str] = field(default_factory=list)
    uploads: dict[str, FakeUpload] = field(default_factory=dict)
    # Completed uploads (id -> key, ETag): completing one again answers 200 again, as S3 does.
    completed: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Listing:
    """The answer to a ListObjects call (v1 or v2)."""

    objects: list[FakeObject]
    common_prefixes: list[str]
    is_truncated: bool
    next_marker: str | None  # the last key or prefix returned, when truncated


def md5_etag(md5: bytes) -> str:
    return md5.hex()


def multipart_etag(part_md5s: Iterable[bytes]) -> str:
    """``md5(md5(part1) || md5(part2) ...)-N``: what OBS and S3 return for a multipart object."""
    digests = list(part_md5s)
    return f"{hashlib.md5(b''.join(digests)).hexdigest()}-{len(digests)}"


def check_key(key: str) -> None:
    if not key:
        raise ObsServiceError(400, "InvalidArgument", "The object key must not be empty")
    if len(key.encode("utf-8")) > MAX_KEY_BYTES:
        raise ObsServiceError(400, "KeyTooLongError", "Your key is too long")

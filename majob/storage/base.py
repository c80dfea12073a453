"""The one narrow seam between majob and object storage.

``ObjectStore`` is what sync, the runner and the pipeline use; ``storage/obs.py`` implements it on
esdk-obs-python (against real OBS or the emulator). Every method raises a ``StorageError``
subclass on failure and never returns an error object.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol


@dataclass(frozen=True)
class ObjectInfo:
    """What a listing or a HEAD tells about one object."""

    key: str
    size: int
    etag: str
    last_modified: float = 0.0
    metadata: Mapping[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ListPage:
    """One page of a listing; ``next_marker`` is None on the last page."""

    objects: Sequence[ObjectInfo]
    next_marker: str | None


@dataclass(frozen=True)
class UploadedPart:
    """A part already stored in a multipart upload."""

    number: int
    etag: str
    size: int


@dataclass(frozen=True)
class MultipartUpload:
    """An upload in progress: its id, the key it will complete to and when it was started
    (seconds since the epoch; 0.0 when unknown, e.g. for an upload this client just created)."""

    key: str
    upload_id: str
    initiated: float = field(default=0.0, compare=False)


class ObjectStore(Protocol):
    """Object storage as majob needs it. ``bucket`` is an OBS bucket name, ``key`` a full key."""

    def list_page(
        self, bucket: str, prefix: str, *, marker: str | None = None, max_keys: int = 1000
    ) -> ListPage: ...

    def list_all(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]: ...

    def head(self, bucket: str, key: str) -> ObjectInfo | None: ...

    def put_file(
        self,
        bucket: str,
        key: str,
        path: Path,
        *,
        content_md5: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> ObjectInfo: ...

    def put_bytes(
        self,
        bucket: str,
        key: str,
        data: bytes,
        *,
        metadata: Mapping[str, str] | None = None,
    ) -> ObjectInfo: ...

    def get_file(self, bucket: str, key: str, path: Path) -> ObjectInfo: ...

    def get_bytes(self, bucket: str, key: str) -> bytes: ...

    def delete_many(self, bucket: str, keys: Sequence[str]) -> None: ...

    def create_bucket(self, bucket: str) -> bool:
        """Create ``bucket`` in the store's region; False when it exists and is ours already."""
        ...

    # Multipart, resumable: a caller lists the uploads and parts already there and sends the rest.
    def create_multipart(
        self, bucket: str, key: str, *, metadata: Mapping[str, str] | None = None
    ) -> MultipartUpload: ...

    def list_multipart_uploads(self, bucket: str, prefix: str) -> list[MultipartUpload]: ...

    def list_parts(self, bucket: str, upload: MultipartUpload) -> list[UploadedPart]: ...

    def upload_part(
        self,
        bucket: str,
        upload: MultipartUpload,
        number: int,
        path: Path,
        offset: int,
        size: int,
        *,
        content_md5: str | None = None,
    ) -> UploadedPart: ...

    def complete_multipart(
        self, bucket: str, upload: MultipartUpload, parts: Sequence[UploadedPart]
    ) -> ObjectInfo: ...

    def abort_multipart(self, bucket: str, upload: MultipartUpload) -> None: ...

    # Server-side copies (the bytes stay in OBS): a whole object up to 5 GB, or a byte range of
    # one (first..last, inclusive) as a part of a multipart upload.
    def copy_object(self, bucket: str, key: str, to_bucket: str, to_key: str) -> str: ...

    def copy_part(
        self,
        bucket: str,
        upload: MultipartUpload,
        number: int,
        source: tuple[str, str],
        first: int,
        last: int,
    ) -> UploadedPart: ...

    def close(self) -> None: ...

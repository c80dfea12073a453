"""The fake OBS backend: the operations on buckets, objects and multipart uploads, with the
rules OBS enforces.

No HTTP (like moto's ``models.py``): the handlers parse a request, call one method here and
serialise what it returns or the ``ObsServiceError`` it raises. The records are in ``state.py``,
bodies in ``blobs.py``; state lives in memory, or is journalled to a data directory
(``journal.py``) when the fake must survive a restart.
"""

from __future__ import annotations

import bisect
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path

from majob.emulator.obs.blobs import INLINE_LIMIT, Blob, BlobRange, BlobWriter
from majob.emulator.obs.errors import (
    ObsServiceError,
    no_such_bucket,
    no_such_key,
    no_such_upload,
    precondition_failed,
)
from majob.emulator.obs.journal import Journal
from majob.emulator.obs.state import (
    MAX_DELETE_KEYS,
    MAX_KEYS,
    MAX_PART_SIZE,
    MAX_PARTS,
    MIN_PART_SIZE,
    FakeBucket,
    FakeObject,
    FakePart,
    FakeUpload,
    Listing,
    ObjectAttributes,
    check_key,
    md5_etag,
    multipart_etag,
)
from majob.emulator.obs.uploads import MultipartOperations
from majob.storage.uri import bucket_name_problem


class ObsBackend(MultipartOperations):
    """All the fake's state. Thread-safe: one lock guards the maps; bodies stream outside it.
    Buckets and objects here, multipart uploads in ``uploads.py``."""

    def __init__(self, data_dir: Path | None = None, *, region: str = "region") -> None:
        self.region = region
        self.data_dir = data_dir
        self._lock = threading.RLock()
        self.buckets: dict[str, FakeBucket] = {}
        self._journal: Journal | None = None
        if data_dir is not None:
            self._journal = Journal(data_dir)
            self.buckets = self._journal.load()

    def close(self) -> None:
        with self._lock:
            if self._journal is not None:
                self._journal.close()

    def new_writer(self) -> BlobWriter:
        """Where a request body goes while it arrives."""
        return self._journal.new_writer() if self._journal is not None else BlobWriter()

    def _log(self, record: Callable[[], dict[str, object]]) -> None:
        """Journal ``record()``; in memory mode it is not even built."""
        if self._journal is not None:
            self._journal.append(record)

    # -- buckets -----------------------------------------------------------------------------

    def create_bucket(self, name: str, location: str | None = None) -> FakeBucket:
        problem = bucket_name_problem(name)
        if problem:
            raise ObsServiceError(400, "InvalidBucketName", problem, resource=name, BucketName=name)
        with self._lock:
            if name in self.buckets:
                raise ObsServiceError(
                    409,
                    "BucketAlreadyOwnedByYou",
                    "Your previous request to create the named bucket succeeded and you "
                    "already own it.",
                    resource=name,
                    BucketName=name,
                )
            bucket = FakeBucket(name, time.time(), location or self.region)
            self.buckets[name] = bucket
            self._log(
                lambda: {
                    "op": "bucket",
                    "name": name,
                    "created": bucket.created,
                    "location": bucket.location,
                }
            )
            return bucket

    def bucket(self, name: str) -> FakeBucket:
        with self._lock:
            found = self.buckets.get(name)
        if found is None:
            raise no_such_bucket(name)
        return found

    def delete_bucket(self, name: str) -> None:
        with self._lock:
            bucket = self.bucket(name)
            if bucket.objects or bucket.uploads:
                raise ObsServiceError(
                    409,
                    "BucketNotEmpty",
                    "The bucket you tried to delete is not empty",
                    resource=name,
                    BucketName=name,
                )
            del self.buckets[name]
            self._log(lambda: {"op": "unbucket", "name": name})

    def ensure_buckets(self, names: Iterable[str]) -> None:
        """Create each bucket of ``names`` that is not there yet (a restarted fake keeps its
        own)."""
        for name in names:
            if name not in self.buckets:
                self.create_bucket(name)

    def list_buckets(self) -> list[FakeBucket]:
        with self._lock:
            return [self.buckets[name] for name in sorted(self.buckets)]

    # -- objects -----------------------------------------------------------------------------

    def put_object(
        self,
        bucket_name: str,
        key: str,
        blob: Blob,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        attributes: ObjectAttributes | None = None,
        if_none_match: bool = False,
    ) -> FakeObject:
        """Store ``blob`` at ``key`` (``attributes`` wins over ``content_type``/``metadata``);
        ``if_none_match``: only if no object is there yet (``If-None-Match: *``), else 412."""
        attributes = attributes or ObjectAttributes(content_type, dict(metadata or {}))
        try:
            check_key(key)
            bucket = self.bucket(bucket_name)
        except ObsServiceError:
            blob.discard()
            raise
        obj = FakeObject(
            key,
            blob,
            md5_etag(blob.md5),
            time.time(),
            attributes.content_type or "binary/octet-stream",
            dict(attributes.metadata),
            dict(attributes.headers),
            attributes.storage_class,
            dict(attributes.tags),
        )
        return self._store(bucket, obj, if_none_match=if_none_match)

    def _store(
        self, bucket: FakeBucket, obj: FakeObject, *, if_none_match: bool = False
    ) -> FakeObject:
        with self._lock:
            old = bucket.objects.get(obj.key)
            if if_none_match and old is not None:
                obj.blob.discard()
                raise precondition_failed("If-None-Match")
            bucket.objects[obj.key] = obj
            if old is None:
                bisect.insort(bucket.sorted_keys, obj.key)
            self._log(lambda: Journal.object_record(bucket.name, obj))
        if old is not None:
            old.blob.discard()
        return obj

    def get_object(self, bucket_name: str, key: str) -> FakeObject:
        bucket = self.bucket(bucket_name)
        with self._lock:
            obj = bucket.objects.get(key)
        if obj is None:
            raise no_such_key(bucket_name, key)
        return obj

    def set_tags(self, bucket_name: str, key: str, tags: Mapping[str, str]) -> FakeObject:
        """Replace the object's tag set (empty: delete it). The object is not rewritten: its
        ETag and Last-Modified stay (OBS and S3 keep them)."""
        bucket = self.bucket(bucket_name)
        with self._lock:
            obj = bucket.objects.get(key)
            if obj is None:
                raise no_such_key(bucket_name, key)
            obj.tags = dict(tags)
            self._log(lambda: {"op": "tags", "bucket": bucket_name, "key": key, "tags": obj.tags})
            return obj

    def open_object(
        self, bucket_name: str, key: str, byte_range: Callable[[FakeObject], tuple[int, int]]
    ) -> tuple[FakeObject, BlobRange]:
        """The object and its bytes ``byte_range(obj)`` (start, length), pinned in the same
        step as the lookup: the caller streams the version it found, whole, even if the object
        is overwritten or deleted meanwhile. ``byte_range`` may raise (a 416, a 304...)."""
        bucket = self.bucket(bucket_name)
        with self._lock:
            obj = bucket.objects.get(key)
            if obj is None:
                raise no_such_key(bucket_name, key)
            start, length = byte_range(obj)
            return obj, BlobRange(obj.blob, start, length)

    def copy_bytes(
        self,
        bucket_name: str,
        key: str,
        first: int = 0,
        last: int | None = None,
        check: Callable[[FakeObject], None] | None = None,
    ) -> tuple[FakeObject, Blob]:
        """A new blob holding bytes ``[first, last]`` of an object (all of it by default), for
        CopyObject and UploadPartCopy: a copy owns its bytes, so deleting the source later
        cannot take them away. ``check`` may refuse the source (its copy conditions)."""

        def whole_or_range(obj: FakeObject) -> tuple[int, int]:
            if check is not None:
                check(obj)
            end = obj.size - 1 if last is None else last
            if last is not None and (first > end or end >= obj.size):
                raise ObsServiceError(
                    400,
                    "InvalidArgument",
                    "The x-amz-copy-source-range value must be of the form bytes=first-last "
                    "where first and last are the zero-based offsets of the first and last "
                    "bytes to copy",
                    ArgumentName="x-amz-copy-source-range",
                )
            return first, end - first + 1

        obj, source = self.open_object(bucket_name, key, whole_or_range)
        writer = self.new_writer()
        try:
            for chunk in source:
                writer.write(chunk)
        except BaseException:
            writer.abandon()
            raise
        finally:
            source.close()
        return obj, writer.finish()

    def delete_object(self, bucket_name: str, key: str) -> bool:
        """Delete ``key``; deleting a missing key is not an error (returns False)."""
        bucket = self.bucket(bucket_name)
        with self._lock:
            obj = bucket.objects.pop(key, None)
            if obj is None:
                return False
            index = bisect.bisect_left(bucket.sorted_keys, key)
            del bucket.sorted_keys[index]
            self._log(lambda: {"op": "delete", "bucket": bucket_name, "key": key})
        obj.blob.discard()
        return True

    def list_objects(
        self,
        bucket_name: str,
        *,
        prefix: str = "",
        marker: str = "",
        delimiter: str = "",
        max_keys: int = MAX_KEYS,
    ) -> Listing:
        """Keys after ``marker`` starting with ``prefix``, rolled up at ``delimiter``."""
        if max_keys < 0:
            raise ObsServiceError(400, "InvalidArgument", "max-keys must not be negative")
        max_keys = min(max_keys, MAX_KEYS)
        bucket = self.bucket(bucket_name)
        if max_keys == 0:
            return Listing([], [], False, None)  # S3: nothing, not truncated, no token
        with self._lock:
            keys = bucket.sorted_keys
            start = bisect.bisect_right(keys, marker) if marker else 0
            if prefix:
                start = max(start, bisect.bisect_left(keys, prefix))
            objects: list[FakeObject] = []
            prefixes: list[str] = []
            last = None
            truncated = False
            index = start
            while index < len(keys):
                key = keys[index]
                if not key.startswith(prefix):
                    break
                if len(objects) + len(prefixes) >= max_keys:
                    truncated = True
                    break
                rest = key[len(prefix) :]
                cut = rest.find(delimiter) if delimiter else -1
                if cut >= 0:
                    common = prefix + rest[: cut + len(delimiter)]
                    if common == marker:
                        # Listed on an earlier page (the marker was this very prefix).
                        index = bisect.bisect_left(keys, common + "\U0010ffff")
                        continue
                    prefixes.append(common)
                    last = common
                    # Skip every key under this common prefix: the next key sorts after it.
                    index = bisect.bisect_left(keys, common + "\U0010ffff")
                    continue
                objects.append(bucket.objects[key])
                last = key
                index += 1
        return Listing(objects, prefixes, truncated, last if truncated else None)


__all__ = [
    "INLINE_LIMIT",
    "MAX_DELETE_KEYS",
    "MAX_KEYS",
    "MAX_PARTS",
    "MAX_PART_SIZE",
    "MIN_PART_SIZE",
    "Blob",
    "BlobRange",
    "BlobWriter",
    "FakeBucket",
    "FakeObject",
    "FakePart",
    "FakeUpload",
    "Journal",
    "Listing",
    "ObjectAttributes",
    "ObsBackend",
    "ObsServiceError",
    "check_key",
    "md5_etag",
    "multipart_etag",
    "no_such_bucket",
    "no_such_key",
    "no_such_upload",
]

"""The fake OBS backend: the operations on buckets, objects and multipart uploads, with the
rules OBS enforces.

No HTTP (like moto's ``models.py``): the handlers parse a request, call one method here and
serialise what it returns or the ``ObsServiceError`` it raises. The records are in ``state.py``,
bodies in ``blobs.py``; state lives in memory, or is journalled to a data directory
(``journal.py``) when the fake must survive a restart.
"""

from __future__ import annotations

import base64
import bisect
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path

from majob.emulator.obs.blobs import INLINE_LIMIT, Blob, BlobRange, BlobWriter
from majob.emulator.obs.errors import (
    ObsServiceError,
    malformed,
    no_such_bucket,
    no_such_key,
    no_such_upload,
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
from majob.storage.uri import bucket_name_problem


class ObsBackend:
    """All the fake's state. Thread-safe: one lock guards the maps; bodies stream outside it."""

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

    # -- multipart ---------------------------------------------------------------------------

    def create_upload(
        self,
        bucket_name: str,
        key: str,
        *,
        content_type: str | None = None,
        metadata: Mapping[str, str] | None = None,
        attributes: ObjectAttributes | None = None,
    ) -> FakeUpload:
        attributes = attributes or ObjectAttributes(content_type, dict(metadata or {}))
        check_key(key)
        bucket = self.bucket(bucket_name)
        upload = FakeUpload(
            uuid.uuid4().hex.upper() + secrets.token_hex(4).upper(),
            key,
            time.time(),
            attributes.content_type or "binary/octet-stream",
            dict(attributes.metadata),
            headers=dict(attributes.headers),
            storage_class=attributes.storage_class,
        )
        with self._lock:
            bucket.uploads[upload.upload_id] = upload
            self._log(lambda: Journal.upload_record(bucket_name, upload))
        return upload

    def upload(self, bucket_name: str, key: str, upload_id: str) -> FakeUpload:
        bucket = self.bucket(bucket_name)
        with self._lock:
            upload = bucket.uploads.get(upload_id)
        if upload is None or upload.key != key:
            raise no_such_upload(upload_id)
        return upload

    def put_part(
        self, bucket_name: str, key: str, upload_id: str, number: int, blob: Blob
    ) -> FakePart:
        if not 1 <= number <= MAX_PARTS:
            blob.discard()
            raise ObsServiceError(
                400,
                "InvalidArgument",
                f"Part number must be an integer between 1 and {MAX_PARTS}, inclusive",
                ArgumentName="partNumber",
                ArgumentValue=str(number),
            )
        if blob.size > MAX_PART_SIZE:
            blob.discard()
            raise ObsServiceError(400, "EntityTooLarge", "Your proposed upload exceeds 5 GiB")
        try:
            upload = self.upload(bucket_name, key, upload_id)
        except ObsServiceError:
            blob.discard()
            raise
        part = FakePart(number, blob, md5_etag(blob.md5), time.time())
        with self._lock:
            if upload.upload_id not in self.bucket(bucket_name).uploads:
                blob.discard()  # completed or aborted while this part was arriving
                raise no_such_upload(upload_id)
            old = upload.parts.get(number)
            upload.parts[number] = part
            self._log(lambda: Journal.part_record(bucket_name, upload_id, part))
        if old is not None:
            old.blob.discard()
        return part

    def complete_upload(
        self, bucket_name: str, key: str, upload_id: str, requested: list[tuple[int, str]]
    ) -> FakeObject:
        """Join the ``(part number, etag)`` list into the object; OBS's rules apply. Completing
        an upload again with the same parts answers what the first completion did (S3 does),
        while its object is still the one that upload made."""
        bucket = self.bucket(bucket_name)
        with self._lock:
            done = bucket.completed.get(upload_id)
            current = bucket.objects.get(key)
        if done is not None and done[0] == key:
            try:  # the same parts again (their ETags make the object's)
                same = multipart_etag(bytes.fromhex(e.strip('"')) for _, e in requested) == done[1]
            except ValueError:
                same = False
            if same and current is not None and current.etag == done[1]:
                return current
            raise no_such_upload(upload_id)
        upload = self.upload(bucket_name, key, upload_id)
        if not requested:
            raise malformed()
        numbers = [number for number, _ in requested]
        if numbers != sorted(set(numbers)):
            raise ObsServiceError(
                400, "InvalidPartOrder", "The list of parts was not in ascending order."
            )
        chosen: list[FakePart] = []
        for number, etag in requested:
            part = upload.parts.get(number)
            if part is None or etag.strip('"').lower() != part.etag:
                raise ObsServiceError(
                    400,
                    "InvalidPart",
                    "One or more of the specified parts could not be found. The part may not "
                    "have been uploaded, or the specified entity tag may not match the part's "
                    "entity tag.",
                    PartNumber=str(number),
                    ETag=etag,
                )
            chosen.append(part)
        for part in chosen[:-1]:
            if part.size < MIN_PART_SIZE:
                raise ObsServiceError(
                    400,
                    "EntityTooSmall",
                    "Your proposed upload is smaller than the minimum allowed object size.",
                    PartNumber=str(part.number),
                    ProposedSize=str(part.size),
                    MinSizeAllowed=str(MIN_PART_SIZE),
                )
        # The object is its parts' blobs in order, as they are: no byte is copied.
        with self._lock:
            for part in chosen:
                upload.parts.pop(part.number, None)
        obj = FakeObject(
            key,
            Blob.joined([part.blob for part in chosen]),
            multipart_etag(part.blob.md5 for part in chosen),
            time.time(),
            upload.content_type,
            upload.metadata,
            upload.headers,
            upload.storage_class,
        )
        self._drop_upload(bucket_name, upload, etag=obj.etag)
        return self._store(bucket, obj)

    def abort_upload(self, bucket_name: str, key: str, upload_id: str) -> None:
        self._drop_upload(bucket_name, self.upload(bucket_name, key, upload_id))

    def _drop_upload(self, bucket_name: str, upload: FakeUpload, etag: str | None = None) -> None:
        """End an upload: aborted, or completed into an object with ``etag``."""
        bucket = self.bucket(bucket_name)
        with self._lock:
            bucket.uploads.pop(upload.upload_id, None)
            record: dict[str, object] = {
                "op": "end-upload",
                "bucket": bucket_name,
                "upload": upload.upload_id,
            }
            if etag is not None:
                bucket.completed[upload.upload_id] = (upload.key, etag)
                record |= {"key": upload.key, "etag": etag}
            self._log(lambda: record)
            parts = list(upload.parts.values())
        for part in parts:
            part.blob.discard()

    def list_uploads(self, bucket_name: str, prefix: str = "") -> list[FakeUpload]:
        bucket = self.bucket(bucket_name)
        with self._lock:
            found = [u for u in bucket.uploads.values() if u.key.startswith(prefix)]
        return sorted(found, key=lambda u: (u.key, u.initiated, u.upload_id))

    def list_parts(self, bucket_name: str, key: str, upload_id: str) -> list[FakePart]:
        upload = self.upload(bucket_name, key, upload_id)
        with self._lock:
            return [upload.parts[n] for n in sorted(upload.parts)]


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
    "continuation_token",
    "md5_etag",
    "multipart_etag",
    "no_such_bucket",
    "no_such_key",
    "no_such_upload",
    "parse_continuation_token",
    "precondition_failed",
]


def precondition_failed(condition: str) -> ObsServiceError:
    return ObsServiceError(
        412,
        "PreconditionFailed",
        "At least one of the pre-conditions you specified did not hold",
        Condition=condition,
    )


def continuation_token(key: str) -> str:
    """An opaque ListObjectsV2 token (the last key, base64): clients must not parse it."""
    return base64.urlsafe_b64encode(key.encode("utf-8")).decode("ascii")


def parse_continuation_token(token: str) -> str:
    try:
        raw = base64.b64decode(token.encode("ascii"), altchars=b"-_", validate=True)
        return raw.decode("utf-8")
    except (ValueError, UnicodeError) as error:
        raise ObsServiceError(
            400, "InvalidArgument", "The continuation token provided is incorrect"
        ) from error

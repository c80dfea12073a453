"""The fake OBS backend: buckets, objects, multipart uploads and the rules OBS enforces.

Pure state, no HTTP (like moto's ``models.py``): ``server.py`` parses a request, calls one
method here and serialises what it returns or the ``ObsServiceError`` it raises. Object bodies
live in memory, or as plain files under a data directory when the fake must survive a restart
(written without fsync: the fake favours speed over durability).
"""

from __future__ import annotations

import base64
import bisect
import hashlib
import json
import os
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from majob.emulator.obs.blobs import INLINE_LIMIT, Blob, BlobRange, BlobWriter
from majob.emulator.obs.errors import (
    ObsServiceError,
    malformed,
    no_such_bucket,
    no_such_key,
    no_such_upload,
)
from majob.storage.uri import MAX_KEY_BYTES, bucket_name_problem

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

    @property
    def size(self) -> int:
        return self.blob.size


@dataclass(frozen=True)
class ObjectAttributes:
    """What a PUT, an initiated upload or a copy sets besides the bytes."""

    content_type: str | None = None
    metadata: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    storage_class: str = "STANDARD"


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


class ObsBackend:
    """All the fake's state. Thread-safe: one lock guards the maps; bodies stream outside it."""

    def __init__(self, data_dir: Path | None = None, *, region: str = "region") -> None:
        self.region = region
        self.data_dir = data_dir
        self._lock = threading.RLock()
        self.buckets: dict[str, FakeBucket] = {}
        self._journal: TextIO | None = None
        if data_dir is not None:
            (data_dir / "blobs").mkdir(parents=True, exist_ok=True)
            self._load()
            self._journal = (data_dir / "journal.jsonl").open("a", encoding="utf-8")

    def close(self) -> None:
        with self._lock:
            if self._journal is not None:
                self._journal.close()
                self._journal = None

    # -- persistence -------------------------------------------------------------------------
    # <dir>/journal.jsonl is an append-only log of changes (one JSON line each, flushed, never
    # fsynced); bodies up to INLINE_LIMIT are inlined in it (base64), larger ones are files in
    # <dir>/blobs/. Loading replays the log, deletes unreferenced blobs and rewrites the log as
    # a snapshot. One append per request keeps a persisting fake about as fast as a memory one.

    def new_writer(self) -> BlobWriter:
        """Where a request body goes while it arrives."""
        if self.data_dir is None:
            return BlobWriter()
        return BlobWriter(self.data_dir / "blobs" / uuid.uuid4().hex)

    def _log(self, record: Callable[[], dict[str, object]]) -> None:
        """Append ``record()`` to the journal; in memory mode it is not even built."""
        if self._journal is not None:
            self._journal.write(json.dumps(record(), separators=(",", ":")) + "\n")
            self._journal.flush()

    @staticmethod
    def _blob_fields(blob: Blob) -> dict[str, object]:
        fields: dict[str, object] = {"size": blob.size, "md5": blob.md5.hex()}
        if blob.pieces:
            fields["pieces"] = [ObsBackend._blob_fields(piece) for piece in blob.pieces]
        elif blob.path is not None:
            fields["file"] = blob.path.name
        else:
            fields["data"] = base64.b64encode(blob.data or b"").decode("ascii")
        return fields

    def _blob_from(self, record: dict[str, Any]) -> Blob:
        md5 = bytes.fromhex(record["md5"])
        if "pieces" in record:
            return Blob(record["size"], md5, pieces=tuple(map(self._blob_from, record["pieces"])))
        if "file" in record:
            assert self.data_dir is not None
            return Blob(record["size"], md5, path=self.data_dir / "blobs" / record["file"])
        return Blob(record["size"], md5, data=base64.b64decode(record["data"]))

    def _object_record(self, bucket: str, obj: FakeObject) -> dict[str, object]:
        return {
            "op": "put",
            "bucket": bucket,
            "key": obj.key,
            "etag": obj.etag,
            "modified": obj.last_modified,
            "type": obj.content_type,
            "meta": obj.metadata,
            "headers": obj.headers,
            "class": obj.storage_class,
            **self._blob_fields(obj.blob),
        }

    def _part_record(self, bucket: str, upload_id: str, part: FakePart) -> dict[str, object]:
        return {
            "op": "part",
            "bucket": bucket,
            "upload": upload_id,
            "number": part.number,
            "etag": part.etag,
            "modified": part.last_modified,
            **self._blob_fields(part.blob),
        }

    @staticmethod
    def _upload_record(bucket: str, upload: FakeUpload) -> dict[str, object]:
        return {
            "op": "upload",
            "bucket": bucket,
            "upload": upload.upload_id,
            "key": upload.key,
            "initiated": upload.initiated,
            "type": upload.content_type,
            "meta": upload.metadata,
            "headers": upload.headers,
            "class": upload.storage_class,
        }

    def _load(self) -> None:
        assert self.data_dir is not None
        path = self.data_dir / "journal.jsonl"
        lines = path.read_text(encoding="utf-8").splitlines() if path.exists() else []
        for number, line in enumerate(lines, start=1):
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                if number == len(lines):
                    break  # the last append was cut short (the process was killed)
                raise
            self._replay(record)
        referenced: set[str] = set()
        snapshot: list[dict[str, object]] = []
        for bucket in self.buckets.values():
            snapshot.append(
                {
                    "op": "bucket",
                    "name": bucket.name,
                    "created": bucket.created,
                    "location": bucket.location,
                }
            )
            for obj in bucket.objects.values():
                snapshot.append(self._object_record(bucket.name, obj))
                referenced.update(path.name for path in obj.blob.files())
            for upload_id, (key, etag) in bucket.completed.items():
                completed: dict[str, object] = {"op": "end-upload", "bucket": bucket.name}
                completed |= {"upload": upload_id, "key": key, "etag": etag}
                snapshot.append(completed)
            for upload in bucket.uploads.values():
                snapshot.append(self._upload_record(bucket.name, upload))
                for part in upload.parts.values():
                    snapshot.append(self._part_record(bucket.name, upload.upload_id, part))
                    referenced.update(path.name for path in part.blob.files())
        for blob_file in (self.data_dir / "blobs").iterdir():
            if blob_file.name not in referenced:
                blob_file.unlink(missing_ok=True)
        fresh = path.with_suffix(".tmp")
        fresh.write_text(
            "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in snapshot), encoding="utf-8"
        )
        os.replace(fresh, path)

    def _replay(self, record: dict[str, Any]) -> None:
        op = record["op"]
        if op == "bucket":
            self.buckets[record["name"]] = FakeBucket(
                record["name"], record["created"], record["location"]
            )
            return
        if op == "unbucket":
            self.buckets.pop(record["name"], None)
            return
        bucket = self.buckets[record["bucket"]]
        if op == "put":
            if record["key"] not in bucket.objects:
                bisect.insort(bucket.sorted_keys, record["key"])
            bucket.objects[record["key"]] = FakeObject(
                record["key"],
                self._blob_from(record),
                record["etag"],
                record["modified"],
                record["type"],
                record["meta"],
                record.get("headers", {}),
                record.get("class", "STANDARD"),
            )
        elif op == "delete":
            if bucket.objects.pop(record["key"], None) is not None:
                del bucket.sorted_keys[bisect.bisect_left(bucket.sorted_keys, record["key"])]
        elif op == "upload":
            bucket.uploads[record["upload"]] = FakeUpload(
                record["upload"],
                record["key"],
                record["initiated"],
                record["type"],
                record["meta"],
                headers=record.get("headers", {}),
                storage_class=record.get("class", "STANDARD"),
            )
        elif op == "part":
            upload = bucket.uploads[record["upload"]]
            upload.parts[record["number"]] = FakePart(
                record["number"], self._blob_from(record), record["etag"], record["modified"]
            )
        elif op == "end-upload":
            bucket.uploads.pop(record["upload"], None)
            if "etag" in record:
                bucket.completed[record["upload"]] = (record["key"], record["etag"])

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
            self._log(lambda: self._object_record(bucket.name, obj))
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
            self._log(lambda: self._upload_record(bucket_name, upload))
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
            self._log(lambda: self._part_record(bucket_name, upload_id, part))
        if old is not None:
            old.blob.discard()
        return part

    def complete_upload(
        self, bucket_name: str, key: str, upload_id: str, requested: list[tuple[int, str]]
    ) -> FakeObject:
        """Join the ``(part number, etag)`` list into the object; OBS's rules apply. Completing
        an upload again answers what the first completion did (S3 does), while its object is
        still the one that upload made."""
        bucket = self.bucket(bucket_name)
        with self._lock:
            done = bucket.completed.get(upload_id)
            current = bucket.objects.get(key)
        if done is not None and done[0] == key:
            if current is not None and current.etag == done[1]:
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
    "Blob",
    "BlobRange",
    "BlobWriter",
    "FakeBucket",
    "FakeObject",
    "FakePart",
    "FakeUpload",
    "Listing",
    "ObjectAttributes",
    "ObsBackend",
    "ObsServiceError",
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

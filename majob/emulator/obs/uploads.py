"""The fake OBS backend's multipart uploads: create, send parts, complete, abort, list; with
the rules OBS enforces (part numbers and sizes, part order and ETags, a repeated completion).

``MultipartOperations`` is part of ``ObsBackend`` (``models.py``): it works on the buckets'
records under the backend's lock and journals what it changes as the backend does.
"""

from __future__ import annotations

import secrets
import threading
import time
import uuid
from collections.abc import Callable, Mapping

from majob.emulator.obs.blobs import Blob, BlobWriter
from majob.emulator.obs.errors import ObsServiceError, malformed, no_such_upload
from majob.emulator.obs.journal import Journal
from majob.emulator.obs.state import (
    MAX_PART_SIZE,
    MAX_PARTS,
    MIN_PART_SIZE,
    FakeBucket,
    FakeObject,
    FakePart,
    FakeUpload,
    ObjectAttributes,
    check_key,
    md5_etag,
    multipart_etag,
)


class MultipartOperations:
    """The multipart part of ``ObsBackend``, which provides what is declared here."""

    _lock: threading.RLock
    bucket: Callable[[str], FakeBucket]
    _log: Callable[[Callable[[], dict[str, object]]], None]
    _store: Callable[[FakeBucket, FakeObject], FakeObject]
    new_writer: Callable[[], BlobWriter]

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
            tags=dict(attributes.tags),
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
            if _same_parts(requested, done[1]) and current is not None and current.etag == done[1]:
                return current
            raise no_such_upload(upload_id)
        upload = self.upload(bucket_name, key, upload_id)
        chosen = _chosen_parts(upload, requested)
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
            upload.tags,
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


def _same_parts(requested: list[tuple[int, str]], etag: str) -> bool:
    """The requested parts are those that made the object ``etag`` (their ETags make it)."""
    try:
        return multipart_etag(bytes.fromhex(e.strip('"')) for _, e in requested) == etag
    except ValueError:
        return False


def _chosen_parts(upload: FakeUpload, requested: list[tuple[int, str]]) -> list[FakePart]:
    """The parts a completion names, checked as OBS checks them: some, in ascending order, each
    uploaded with that ETag, each but the last at least ``MIN_PART_SIZE``."""
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
    return chosen

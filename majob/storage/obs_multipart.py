"""The multipart half of the OBS store: create an upload, send parts, list what an upload holds
(to resume it), complete or abort it. ``storage/transfer.py`` decides when and how; each method
here is one request (or one listing, page by page) through ``ObsConnection._call``.
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from majob.errors import StorageIntegrityError, StorageNotFound
from majob.storage.base import MultipartUpload, ObjectInfo, UploadedPart
from majob.storage.obs_answers import local_epoch, plain_etag
from majob.storage.obs_connection import ObsConnection
from majob.storage.part_reader import PartReader


class ObsMultipart(ObsConnection):
    """Multipart uploads on one ``ObsConnection``."""

    def create_multipart(
        self, bucket: str, key: str, *, metadata: Mapping[str, str] | None = None
    ) -> MultipartUpload:
        result = self._call(
            "start multipart upload",
            bucket,
            key,
            lambda: self._client.initiateMultipartUpload(
                bucket, key, metadata=dict(metadata or {})
            ),
        )
        upload_id = self._read(
            "start multipart upload", bucket, key, result, lambda body: str(body.uploadId)
        )
        return MultipartUpload(key, upload_id)

    def list_multipart_uploads(self, bucket: str, prefix: str) -> list[MultipartUpload]:
        uploads: list[MultipartUpload] = []
        key_marker: str | None = None
        id_marker: str | None = None
        while True:
            request = self._sdk.ListMultipartUploadsRequest(
                prefix=prefix or None, key_marker=key_marker, upload_id_marker=id_marker
            )
            result = self._call(
                "list multipart uploads",
                bucket,
                prefix,
                functools.partial(self._client.listMultipartUploads, bucket, request),
            )
            body, page = self._read(
                "list multipart uploads",
                bucket,
                prefix,
                result,
                lambda b: (
                    b,
                    [
                        MultipartUpload(u.key, u.uploadId, local_epoch(u.initiated))
                        for u in b.upload or []
                    ],
                ),
            )
            uploads.extend(page)
            if not body.isTruncated or not body.upload:
                return uploads
            key_marker, id_marker = body.nextKeyMarker, body.nextUploadIdMarker

    def list_parts(self, bucket: str, upload: MultipartUpload) -> list[UploadedPart]:
        parts: list[UploadedPart] = []
        marker: int | None = None
        while True:
            result = self._call(
                "list parts",
                bucket,
                upload.key,
                functools.partial(
                    self._client.listParts,
                    bucket,
                    upload.key,
                    upload.upload_id,
                    partNumberMarker=marker,
                ),
            )
            body, page = self._read(
                "list parts",
                bucket,
                upload.key,
                result,
                lambda b: (
                    b,
                    [
                        UploadedPart(int(p.partNumber), plain_etag(p.etag), int(p.size or 0))
                        for p in b.parts or []
                    ],
                ),
            )
            parts.extend(page)
            if not body.isTruncated or not body.parts:
                return parts
            marker = int(body.nextPartNumberMarker)

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
    ) -> UploadedPart:
        """Send ``size`` bytes of ``path`` from ``offset``. With ``content_md5`` (base64) the
        server refuses a part that does not arrive as it was read. Without, the part is read
        once and hashed as it is sent (``PartReader``); the ETag the server computed must be
        the MD5 of those bytes (else ``StorageIntegrityError``), and that MD5 is the part's."""
        sent: list[PartReader] = []

        def send() -> Any:
            for earlier in sent:  # an attempt that failed before the SDK closed its reader
                earlier.close()
            reader = PartReader(path, offset, size)
            sent[:] = [reader]
            return self._client.uploadPart(
                bucket,
                upload.key,
                number,
                upload.upload_id,
                object=reader,
                partSize=size,
                md5=content_md5,
                autoClose=True,
            )

        action = f"upload part {number}"
        try:
            result = self._call(action, bucket, upload.key, send)
        finally:
            for reader in sent:
                reader.close()
        etag = plain_etag(self._read(action, bucket, upload.key, result, lambda b: b.etag))
        reader = sent[0]
        md5 = reader.md5()
        if reader.sent != size or etag not in ("", md5):
            raise StorageIntegrityError(
                f"part {number} was stored with ETag {etag}, but the {reader.sent} bytes sent "
                f"have MD5 {md5}",
                code="BadDigest",
                bucket=bucket,
                key=upload.key,
            )
        return UploadedPart(number, md5, size)

    def complete_multipart(
        self, bucket: str, upload: MultipartUpload, parts: Sequence[UploadedPart]
    ) -> ObjectInfo:
        ordered = sorted(parts, key=lambda p: p.number)
        request = self._sdk.CompleteMultipartUploadRequest(
            parts=[self._sdk.CompletePart(partNum=p.number, etag=p.etag) for p in ordered]
        )
        result = self._call(
            "complete multipart upload",
            bucket,
            upload.key,
            lambda: self._client.completeMultipartUpload(
                bucket, upload.key, upload.upload_id, request
            ),
        )
        etag = self._read("complete multipart upload", bucket, upload.key, result, lambda b: b.etag)
        return ObjectInfo(upload.key, sum(p.size for p in ordered), plain_etag(etag))

    def abort_multipart(self, bucket: str, upload: MultipartUpload) -> None:
        with contextlib.suppress(StorageNotFound):  # already gone: what aborting wants
            self._call(
                "abort multipart upload",
                bucket,
                upload.key,
                lambda: self._client.abortMultipartUpload(bucket, upload.key, upload.upload_id),
            )

"""Server-side copies on OBS: one object whole (CopyObject), or a range of one into a multipart
upload (UploadPartCopy) for an object over CopyObject's 5 GB. The bytes never pass through this
machine. ``storage/copy.py`` decides which; each method here is one request through
``ObsConnection._call``. The SDK URL-encodes the ``x-obs-copy-source`` header itself (a test
copies keys with ``%``, ``+``, ``?``, spaces and non-ASCII letters), so keys go in as they are.
"""

from __future__ import annotations

from majob.storage.base import MultipartUpload, UploadedPart
from majob.storage.obs_answers import plain_etag
from majob.storage.obs_multipart import ObsMultipart


class ObsCopy(ObsMultipart):
    """Copies inside OBS on one ``ObsConnection``."""

    def copy_object(self, bucket: str, key: str, to_bucket: str, to_key: str) -> str:
        """Copy ``bucket/key`` to ``to_bucket/to_key`` (at most 5 GB), its metadata with it;
        the copy's ETag."""
        result = self._call(
            "copy object",
            to_bucket,
            to_key,
            lambda: self._client.copyObject(bucket, key, to_bucket, to_key),
        )
        etag = self._read("copy object", to_bucket, to_key, result, lambda body: body.etag)
        return plain_etag(etag)

    def copy_part(
        self,
        bucket: str,
        upload: MultipartUpload,
        number: int,
        source: tuple[str, str],
        first: int,
        last: int,
    ) -> UploadedPart:
        """Part ``number`` of ``upload`` (in ``bucket``): bytes ``first..last`` (inclusive) of
        the object ``source`` (bucket, key)."""
        source_bucket, source_key = source
        result = self._call(
            f"copy part {number}",
            bucket,
            upload.key,
            lambda: self._client.copyPart(
                bucket,
                upload.key,
                number,
                upload.upload_id,
                f"{source_bucket}/{source_key}",
                copySourceRange=f"bytes={first}-{last}",
            ),
        )
        etag = self._read(f"copy part {number}", bucket, upload.key, result, lambda b: b.etag)
        return UploadedPart(number, plain_etag(etag), last - first + 1)

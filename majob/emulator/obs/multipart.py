"""Multipart-upload requests of the fake OBS: initiate, upload a part (or copy one from an
object: UploadPartCopy), complete (again, idempotently), abort and list the parts."""

from __future__ import annotations

import re
from urllib.parse import quote

from majob.emulator.obs.errors import invalid_argument, malformed
from majob.emulator.obs.objects import ObjectHandlers
from majob.emulator.obs.wire import (
    Response,
    Xml,
    child_text,
    children,
    int_arg,
    iso_time,
    parse_xml,
)

_COPY_RANGE = re.compile(r"bytes=(\d+)-(\d+)")


class MultipartHandlers(ObjectHandlers):
    def _initiate(self, bucket: str, key: str) -> Response:
        upload = self.backend.create_upload(bucket, key, attributes=self._attributes())
        xml = Xml("InitiateMultipartUploadResult", self._ns())
        xml.leaf("Bucket", bucket).leaf("Key", key).leaf("UploadId", upload.upload_id)
        return Response(200, body=xml.bytes())

    def _upload_part(self, bucket: str, key: str, upload_id: str) -> Response:
        number = int_arg(self.args, "partNumber")
        source = self._copy_source()
        if source is None:
            blob = self._receive_blob()
            part = self.backend.put_part(bucket, key, upload_id, number, blob)
            return Response(200, {"ETag": f'"{part.etag}"'})
        # UploadPartCopy: the part's bytes come from an object (all of it, or a range).
        self._drain()
        self.backend.upload(bucket, key, upload_id)
        first, last = 0, None
        copy_range = self._header("copy-source-range")
        if copy_range is not None:
            match = _COPY_RANGE.fullmatch(copy_range.strip())
            if match is None:
                raise invalid_argument(
                    "The x-amz-copy-source-range value must be of the form bytes=first-last",
                    "x-amz-copy-source-range",
                    copy_range,
                )
            first, last = int(match[1]), int(match[2])
        _, blob = self.backend.copy_bytes(*source, first, last, check=self._source_check())
        part = self.backend.put_part(bucket, key, upload_id, number, blob)
        xml = Xml("CopyPartResult", self._ns())
        xml.leaf("LastModified", iso_time(part.last_modified)).leaf("ETag", f'"{part.etag}"')
        return Response(200, body=xml.bytes())

    def _complete(self, bucket: str, key: str, upload_id: str) -> Response:
        root = parse_xml(self._read_small())
        try:
            parts = [
                (int(child_text(node, "PartNumber") or ""), child_text(node, "ETag") or "")
                for node in children(root, "Part")
            ]
        except ValueError as error:
            raise malformed() from error
        obj = self.backend.complete_upload(bucket, key, upload_id, parts)
        xml = Xml("CompleteMultipartUploadResult", self._ns())
        xml.leaf("Location", f"/{bucket}/{quote(key)}").leaf("Bucket", bucket).leaf("Key", key)
        xml.leaf("ETag", f'"{obj.etag}"')
        return Response(200, body=xml.bytes())

    def _list_parts(self, bucket: str, key: str, upload_id: str) -> Response:
        parts = self.backend.list_parts(bucket, key, upload_id)
        marker = int_arg(self.args, "part-number-marker", 0)
        max_parts = int_arg(self.args, "max-parts", 1000)
        after = [p for p in parts if p.number > marker]
        page, truncated = after[:max_parts], len(after) > max_parts
        xml = Xml("ListPartsResult", self._ns())
        xml.leaf("Bucket", bucket).leaf("Key", key).leaf("UploadId", upload_id)
        xml.open("Initiator").leaf("ID", "majobfakeowner").close("Initiator")
        xml.open("Owner").leaf("ID", "majobfakeowner").close("Owner")
        xml.leaf("StorageClass", "STANDARD").leaf("PartNumberMarker", marker)
        xml.leaf("NextPartNumberMarker", page[-1].number if page else marker)
        xml.leaf("MaxParts", max_parts).leaf("IsTruncated", truncated)
        for part in page:
            xml.open("Part").leaf("PartNumber", part.number)
            xml.leaf("LastModified", iso_time(part.last_modified)).leaf("ETag", f'"{part.etag}"')
            xml.leaf("Size", part.size).close("Part")
        return Response(200, body=xml.bytes())

"""Object requests of the fake OBS: PUT (and CopyObject), GET and HEAD (ranges, conditions,
response overrides), DELETE."""

from __future__ import annotations

from collections.abc import Callable
from urllib.parse import unquote

from majob.emulator.obs import conditions
from majob.emulator.obs.errors import ObsServiceError, invalid_argument, invalid_request
from majob.emulator.obs.models import FakeObject, ObjectAttributes
from majob.emulator.obs.request import RequestContext
from majob.emulator.obs.wire import Response, Xml, http_time, iso_time, parse_range

RESPONSE_OVERRIDES = {
    "response-content-type": "Content-Type",
    "response-content-language": "Content-Language",
    "response-expires": "Expires",
    "response-cache-control": "Cache-Control",
    "response-content-disposition": "Content-Disposition",
    "response-content-encoding": "Content-Encoding",
}
# The query arguments a GET of an object may carry: overrides and presigned-URL fields.
GET_ARGS = set(RESPONSE_OVERRIDES) | {
    "x-id", "AWSAccessKeyId", "AccessKeyId", "Expires", "Signature", "X-Amz-Algorithm",
    "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
    "X-Amz-Signature", "X-Amz-Security-Token", "x-obs-security-token",
}  # fmt: skip


class ObjectHandlers(RequestContext):
    def _copy_source(self) -> tuple[str, str] | None:
        """``(bucket, key)`` of ``x-amz-copy-source`` / ``x-obs-copy-source``, if sent."""
        header = self._header("copy-source")
        if header is None:
            return None
        source, _, version = header.partition("?")
        if version and not version.startswith("versionId="):
            raise invalid_argument("Invalid copy source", "x-amz-copy-source", header)
        bucket, _, key = unquote(source, errors="strict").lstrip("/").partition("/")
        if not bucket or not key:
            raise invalid_argument(
                "Copy Source must mention the source bucket and key: sourcebucket/sourcekey",
                "x-amz-copy-source",
                header,
            )
        return bucket, key

    def _source_check(self) -> Callable[[FakeObject], None]:
        prefix = f"x-{self.family}-copy-source-if-"

        def check(obj: FakeObject) -> None:
            conditions.check(self.lower_headers, obj, prefix=prefix)

        return check

    def _put_object(self, bucket: str, key: str) -> Response:
        source = self._copy_source()
        if source is not None:
            return self._copy_object(bucket, key, *source)
        self.backend.bucket(bucket)
        attributes = self._attributes()
        if_none_match = self.lower_headers.get("if-none-match")
        if if_none_match is not None and if_none_match.strip() != "*":
            raise ObsServiceError(
                501,
                "NotImplemented",
                "A header you provided implies functionality that is not implemented",
                Header="If-None-Match",
            )
        blob = self._receive_blob()
        obj = self.backend.put_object(
            bucket, key, blob, attributes=attributes, if_none_match=if_none_match is not None
        )
        return Response(200, {"ETag": f'"{obj.etag}"'})

    def _copy_object(self, bucket: str, key: str, source_bucket: str, source_key: str) -> Response:
        """CopyObject: the bytes are copied; the metadata too (``COPY``, the default) or taken
        from this request (``REPLACE``)."""
        self._drain()
        directive = (self._header("metadata-directive") or "COPY").upper()
        if directive not in ("COPY", "REPLACE"):
            raise invalid_argument(
                "Unknown metadata directive.", "x-amz-metadata-directive", directive
            )
        requested = self._attributes()
        self.backend.bucket(bucket)
        source, blob = self.backend.copy_bytes(
            source_bucket, source_key, check=self._source_check()
        )
        if directive == "COPY":
            attributes = ObjectAttributes(
                source.content_type, source.metadata, source.headers, requested.storage_class
            )
            same_class = requested.storage_class == source.storage_class
            if (source_bucket, source_key) == (bucket, key) and same_class:
                blob.discard()
                raise invalid_request(
                    "This copy request is illegal because it is trying to copy an object to "
                    "itself without changing the object's metadata, storage class, website "
                    "redirect location or encryption attributes."
                )
        else:
            attributes = requested
        obj = self.backend.put_object(bucket, key, blob, attributes=attributes)
        xml = Xml("CopyObjectResult", self._ns())
        xml.leaf("LastModified", iso_time(obj.last_modified)).leaf("ETag", f'"{obj.etag}"')
        return Response(200, body=xml.bytes())

    def _get_object(self, bucket: str, key: str) -> Response:
        """GET or HEAD. The bytes are pinned when the object is found: the GET sends the
        version it found, whole, even if the object is overwritten or deleted meanwhile."""
        byte_range = self.lower_headers.get("range")
        content_range: list[str] = []

        def plan(obj: FakeObject) -> tuple[int, int]:
            conditions.check(self.lower_headers, obj)
            if byte_range:
                parsed = parse_range(byte_range, obj.size)
                if parsed is not None:
                    start, end = parsed
                    content_range.append(f"bytes {start}-{end}/{obj.size}")
                    return start, end - start + 1
            return 0, obj.size

        try:
            obj, body = self.backend.open_object(bucket, key, plan)
        except conditions.NotModified as not_modified:
            found = not_modified.obj
            return Response(
                304, {"ETag": f'"{found.etag}"', "Last-Modified": http_time(found.last_modified)}
            )
        headers = self._object_headers(obj)
        for arg, header in RESPONSE_OVERRIDES.items():
            if arg in self.args:
                headers[header] = self.args[arg]
        status = 200
        if content_range:
            headers["Content-Range"] = content_range[0]
            status = 206
        if self.command == "HEAD":
            body.close()
            return Response(status, headers, b"", body.length)
        return Response(status, headers, body, body.length)

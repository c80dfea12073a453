"""Object requests of the fake OBS: PUT (and CopyObject), GET and HEAD (ranges, a multipart
object's parts, conditions, response overrides), DELETE, and the object's tag set."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from urllib.parse import unquote

from majob.emulator.obs import conditions
from majob.emulator.obs.errors import ObsServiceError, invalid_argument, invalid_request
from majob.emulator.obs.models import FakeObject, ObjectAttributes
from majob.emulator.obs.request import RequestContext
from majob.emulator.obs.state import MAX_PARTS
from majob.emulator.obs.tags import tagging_document, tags_from_document
from majob.emulator.obs.wire import Response, Xml, http_time, int_arg, iso_time, parse_range

RESPONSE_OVERRIDES = {
    "response-content-type": "Content-Type",
    "response-content-language": "Content-Language",
    "response-expires": "Expires",
    "response-cache-control": "Cache-Control",
    "response-content-disposition": "Content-Disposition",
    "response-content-encoding": "Content-Encoding",
}
# The query arguments a GET of an object may carry: overrides, a part, presigned-URL fields.
GET_ARGS = set(RESPONSE_OVERRIDES) | {
    "partNumber", "versionId", "x-id", "AWSAccessKeyId", "AccessKeyId", "Expires", "Signature",
    "X-Amz-Algorithm", "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
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
        # Tags follow their own directive (S3's x-amz-tagging-directive): the source's by
        # default, or this request's x-amz-tagging with REPLACE.
        tagging = (self._header("tagging-directive") or "COPY").upper()
        if tagging not in ("COPY", "REPLACE"):
            blob.discard()
            raise invalid_argument(
                "Unknown tagging directive.", f"x-{self.family}-tagging-directive", tagging
            )
        tags = source.tags if tagging == "COPY" else requested.tags
        attributes = replace(attributes, tags=tags)
        obj = self.backend.put_object(bucket, key, blob, attributes=attributes)
        xml = Xml("CopyObjectResult", self._ns())
        xml.leaf("LastModified", iso_time(obj.last_modified)).leaf("ETag", f'"{obj.etag}"')
        return Response(200, body=xml.bytes())

    def _get_object(self, bucket: str, key: str) -> Response:
        """GET or HEAD. The bytes are pinned when the object is found: the GET sends the
        version it found, whole, even if the object is overwritten or deleted meanwhile."""
        version = self.args.get("versionId")
        if version is not None and version != "null":  # the one version of an unversioned key
            raise invalid_argument("Invalid version id specified", "versionId", version)
        byte_range = self.lower_headers.get("range")
        part = self._part_number()
        if part is not None and byte_range:
            raise invalid_request("Cannot specify both Range header and partNumber query parameter")
        content_range: list[str] = []
        parts_count: list[int] = []

        def plan(obj: FakeObject) -> tuple[int, int]:
            conditions.check(self.lower_headers, obj)
            if part is not None:
                start, length, count = _part_range(obj, part)
                if length:
                    content_range.append(f"bytes {start}-{start + length - 1}/{obj.size}")
                parts_count.extend([count] if count else [])
                return start, length
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
        if obj.tags and self.command == "GET":
            headers[f"x-{self.family}-tagging-count"] = str(len(obj.tags))
        if parts_count:
            headers[f"x-{self.family}-mp-parts-count"] = str(parts_count[0])
        status = 200
        if content_range:
            headers["Content-Range"] = content_range[0]
            status = 206
        if self.command == "HEAD":
            body.close()
            return Response(status, headers, b"", body.length)
        return Response(status, headers, body, body.length)

    def _part_number(self) -> int | None:
        """The ``partNumber`` a GET or HEAD asks for (1 to 10,000), if any."""
        if "partNumber" not in self.args:
            return None
        number = int_arg(self.args, "partNumber")
        if not 1 <= number <= MAX_PARTS:
            raise invalid_argument(
                f"Part number must be an integer between 1 and {MAX_PARTS}, inclusive",
                "partNumber",
                self.args["partNumber"],
            )
        return number

    # -- tagging -----------------------------------------------------------------------------

    def _tagging_request(self, bucket: str, key: str) -> Response:
        """PutObjectTagging, GetObjectTagging, DeleteObjectTagging (``?tagging``). The bucket
        is unversioned, so the only version a ``versionId`` may name is ``null``."""
        version = self.args.get("versionId")
        if version is not None and version != "null":
            raise invalid_argument("Invalid version id specified", "versionId", version)
        if self.command == "PUT":
            if "content-md5" not in self.lower_headers and not any(
                name.startswith(("x-amz-checksum-", "x-amz-trailer", "x-amz-sdk-checksum"))
                for name in self.lower_headers
            ):
                raise invalid_request("Missing required header for this request: Content-MD5")
            tags = tags_from_document(self._read_checked())
            self.backend.set_tags(bucket, key, tags)
            return Response(200)
        if self.command == "DELETE":
            self.backend.set_tags(bucket, key, {})
            return Response(204)
        obj = self.backend.get_object(bucket, key)
        return Response(200, body=tagging_document(obj.tags, self._ns()))


def _part_range(obj: FakeObject, number: int) -> tuple[int, int, int]:
    """``(start, length, parts count)`` of part ``number``: a multipart object's part as it was
    uploaded, any other object as its one part 1 (with no count), as S3 serves them; a part
    past the last is ``416 InvalidPartNumber``."""
    ranges = obj.part_ranges()
    if number > max(len(ranges), 1):
        raise ObsServiceError(
            416,
            "InvalidPartNumber",
            "The requested partnumber is not satisfiable",
            PartNumberRequested=str(number),
            ActualPartCount=str(max(len(ranges), 1)),
        )
    if not ranges:
        return 0, obj.size, 0
    start, length = ranges[number - 1]
    return start, length, len(ranges)

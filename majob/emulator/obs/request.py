"""One request to the fake OBS as the handlers see it: its headers, its body (streamed,
de-chunked, checked against Content-MD5, x-amz-content-sha256 and x-amz-checksum-*, timed out
when the client stalls) and the way an answer is written back, in the header family the request
used (``x-obs-*`` for OBS-protocol requests, ``x-amz-*`` otherwise).

``RequestContext`` is the base of the handlers per resource (``buckets``, ``objects``,
``multipart``); ``server.ObsRequestHandler`` combines them.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol

from majob.emulator.http import BadFraming, LoopbackHTTPServer, declared_length, reset_connection
from majob.emulator.obs.blobs import Blob
from majob.emulator.obs.checksums import ChecksumCheck
from majob.emulator.obs.errors import ObsServiceError, invalid_argument
from majob.emulator.obs.faults import FaultInjector, LoggedRequest, RequestLog
from majob.emulator.obs.models import FakeObject, ObjectAttributes, ObsBackend
from majob.emulator.obs.tags import tags_from_header
from majob.emulator.obs.wire import BodyTooShort, Response, Xml, aws_chunked, http_time

S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"
OBS_NS = "http://obs.myhwclouds.com/doc/2015-06-30/"
CHUNK = 1 << 20

# The representation headers OBS stores with an object and returns on GET and HEAD.
STORED_HEADERS = {
    "cache-control": "Cache-Control",
    "content-disposition": "Content-Disposition",
    "content-encoding": "Content-Encoding",
    "content-language": "Content-Language",
    "expires": "Expires",
}
STORAGE_CLASSES = frozenset(
    {
        "STANDARD", "REDUCED_REDUNDANCY", "STANDARD_IA", "ONEZONE_IA", "INTELLIGENT_TIERING",
        "GLACIER", "GLACIER_IR", "DEEP_ARCHIVE", "WARM", "COLD",
    }
)  # fmt: skip


class FakeObsState(Protocol):
    """What a request reaches of its server (``server.FakeObsServer``)."""

    backend: ObsBackend
    credentials: Mapping[str, str] | None
    tokens: dict[str, str]
    faults: FaultInjector
    log: RequestLog[LoggedRequest]
    request_timeout: float
    region: str


class ObsHttpd(LoopbackHTTPServer):
    fake: FakeObsState


def request_timeout() -> ObsServiceError:
    return ObsServiceError(
        400,
        "RequestTimeout",
        "Your socket connection to the server was not read from or written to within the "
        "timeout period. Idle connections will be closed.",
    )


class RequestContext(BaseHTTPRequestHandler):
    """The parsed request (set by ``server.ObsRequestHandler._handle``) and its body."""

    protocol_version = "HTTP/1.1"
    server_version = "OBS"
    sys_version = ""
    disable_nagle_algorithm = True
    server: ObsHttpd

    raw_path: str
    raw_query: str
    query: list[tuple[str, str]]
    args: dict[str, str]
    lower_headers: dict[str, str]
    family: str
    auth_kind: str
    request_id: str
    body_consumed: bool

    def version_string(self) -> str:
        return "OBS"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    @property
    def backend(self) -> ObsBackend:
        return self.server.fake.backend

    def _ns(self) -> str:
        return OBS_NS if self.family == "obs" else S3_NS

    def _header(self, name: str) -> str | None:
        """An ``x-obs-<name>`` or ``x-amz-<name>`` header, whichever the family is."""
        return self.lower_headers.get(f"x-{self.family}-{name}") or self.lower_headers.get(
            f"x-amz-{name}" if self.family == "obs" else f"x-obs-{name}"
        )

    def _metadata(self) -> dict[str, str]:
        prefixes = ("x-obs-meta-", "x-amz-meta-")
        return {
            name[len(prefix) :]: value
            for name, value in self.lower_headers.items()
            for prefix in prefixes
            if name.startswith(prefix)
        }

    def _attributes(self) -> ObjectAttributes:
        """What the request's headers set on the object besides its bytes."""
        headers = {
            canonical: self.lower_headers[name]
            for name, canonical in STORED_HEADERS.items()
            if name in self.lower_headers
        }
        encoding = [
            part.strip()
            for part in headers.pop("Content-Encoding", "").split(",")
            if part.strip() and part.strip() != "aws-chunked"  # how it was sent, not what it is
        ]
        if encoding:
            headers["Content-Encoding"] = ",".join(encoding)
        storage_class = (self._header("storage-class") or "STANDARD").upper()
        if storage_class not in STORAGE_CLASSES:
            raise ObsServiceError(
                400, "InvalidStorageClass", "The storage class you specified is not valid"
            )
        tags = tags_from_header(self._header("tagging"), f"x-{self.family}-tagging")
        return ObjectAttributes(
            self.lower_headers.get("content-type"), self._metadata(), headers, storage_class, tags
        )

    def _object_headers(self, obj: FakeObject) -> dict[str, str]:
        headers = {
            "ETag": f'"{obj.etag}"',
            "Last-Modified": http_time(obj.last_modified),
            "Content-Type": obj.content_type,
            "Accept-Ranges": "bytes",
            **obj.headers,
        }
        if obj.storage_class != "STANDARD":  # as S3 and OBS: only a non-default class is named
            headers[f"x-{self.family}-storage-class"] = obj.storage_class
        for name, value in obj.metadata.items():
            headers[f"x-{self.family}-meta-{name}"] = value
        return headers

    # -- bodies ------------------------------------------------------------------------------

    def _body_length(self) -> int | None:
        """Content-Length, or None for a chunked body (checked by ``_check_framing``)."""
        return declared_length(
            self.lower_headers.get("content-length"), self.lower_headers.get("transfer-encoding")
        )

    def _check_framing(self) -> None:
        """A Content-Length that is not a non-negative integer leaves the body's end unknown:
        400, and the connection is closed after the answer."""
        try:
            self._body_length()
        except BadFraming:
            self.body_consumed = True
            self.close_connection = True
            raise invalid_argument(
                "Content-Length must be a non-negative integer",
                "Content-Length",
                self.lower_headers.get("content-length", ""),
            ) from None

    def _chunks(self, trailers: dict[str, str] | None = None) -> Iterator[bytes]:
        """The request body as it arrives, de-chunked (HTTP chunked and aws-chunked)."""
        self.body_consumed = True
        length = self._body_length()
        raw: Iterator[bytes] = self._http_chunks() if length is None else self._sized(length)
        sha = self.lower_headers.get("x-amz-content-sha256", "")
        encoding = self.lower_headers.get("content-encoding", "")
        if sha.startswith("STREAMING-") or "aws-chunked" in encoding:
            return aws_chunked(raw, trailers)
        return raw

    def _read(self, size: int, *, line: bool = False) -> bytes:
        """Read from the client; a client that stalls longer than the server's request timeout
        gets 400 RequestTimeout (and the connection is closed)."""
        try:
            return self.rfile.readline(size) if line else self.rfile.read(size)
        except TimeoutError:
            self.close_connection = True
            raise request_timeout() from None

    def _sized(self, length: int) -> Iterator[bytes]:
        left = length
        while left > 0:
            chunk = self._read(min(left, CHUNK))
            if not chunk:
                raise BodyTooShort
            left -= len(chunk)
            yield chunk

    def _http_chunks(self) -> Iterator[bytes]:
        while True:
            line = self._read(65537, line=True)
            if not line:
                raise BodyTooShort
            try:
                size = int(line.split(b";")[0].strip() or b"0", 16)
            except ValueError:
                self.close_connection = True
                raise ObsServiceError(400, "BadRequest", "Malformed chunked body") from None
            if size == 0:
                while self._read(65537, line=True) not in (b"\r\n", b"\n", b""):
                    pass
                return
            yield from self._sized(size)
            self._read(65537, line=True)

    def _drain(self) -> None:
        if not self.body_consumed:
            for _ in self._chunks():
                pass

    def _read_small(self) -> bytes:
        return b"".join(self._chunks())

    def _read_checked(self) -> bytes:
        """A small body (an XML document), checked against Content-MD5 and x-amz-checksum-*."""
        checksum = ChecksumCheck(self.lower_headers)
        trailers: dict[str, str] = {}
        body = b"".join(self._chunks(trailers))
        checksum.update(body)
        self._check_md5(hashlib.md5(body).digest())
        checksum.verify(trailers)
        return body

    def _receive_blob(self) -> Blob:
        """Stream the body into a blob, checking Content-MD5, x-amz-content-sha256 and any
        x-amz-checksum-* header or trailer."""
        checksum = ChecksumCheck(self.lower_headers)
        writer = self.backend.new_writer()
        claimed_sha = self.lower_headers.get("x-amz-content-sha256", "")
        sha = hashlib.sha256() if len(claimed_sha) == 64 else None
        trailers: dict[str, str] = {}
        try:
            for chunk in self._chunks(trailers):
                writer.write(chunk)
                checksum.update(chunk)
                if sha is not None:
                    sha.update(chunk)
        except BaseException:
            writer.abandon()
            raise
        blob = writer.finish()
        try:
            self._check_md5(blob.md5)
            if sha is not None and sha.hexdigest() != claimed_sha.lower():
                raise ObsServiceError(
                    400,
                    "XAmzContentSHA256Mismatch",
                    "The provided 'x-amz-content-sha256' header does not match what was computed.",
                )
            checksum.verify(trailers)
        except ObsServiceError:
            blob.discard()
            raise
        return blob

    def _check_md5(self, md5: bytes) -> None:
        claimed = self.lower_headers.get("content-md5")
        if claimed is None:
            return
        try:
            wanted = base64.b64decode(claimed.strip(), validate=True)
        except (binascii.Error, ValueError) as error:
            raise ObsServiceError(
                400, "InvalidDigest", "The Content-MD5 you specified was invalid."
            ) from error
        if len(wanted) != 16:
            raise ObsServiceError(
                400, "InvalidDigest", "The Content-MD5 you specified was invalid."
            )
        if wanted != md5:
            raise ObsServiceError(
                400,
                "BadDigest",
                "The Content-MD5 you specified did not match what we received.",
                ExpectedDigest=claimed,
                CalculatedDigest=base64.b64encode(md5).decode("ascii"),
            )

    # -- answers -----------------------------------------------------------------------------

    def _send(self, response: Response, *, reset_half_way: bool = False) -> None:
        try:
            self._write(response, reset_half_way=reset_half_way)
        finally:
            close = getattr(response.body, "close", None)
            if close is not None:
                close()  # a pinned object body that was not (fully) sent

    def _write(self, response: Response, *, reset_half_way: bool) -> None:
        prefix = f"x-{self.family}-"
        body = response.body
        if response.length is not None:
            length = response.length
        else:
            length = len(body) if isinstance(body, bytes) else 0
        if reset_half_way and (self.command == "HEAD" or length == 0):
            self._abort()  # no body to cut: the request was handled, the answer never comes
            return
        self.send_response(response.status)
        headers = {
            f"{prefix}request-id": self.request_id,
            f"{prefix}id-2": self.request_id.lower() * 2,
            **response.headers,
        }
        if response.status != 304:  # a 304 has no body, so no length
            headers["Content-Length"] = str(length)
        if isinstance(body, bytes) and body and "Content-Type" not in headers:
            headers["Content-Type"] = "application/xml"
        if self.close_connection:
            headers["Connection"] = "close"
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD" or response.status == 304:
            return
        if reset_half_way:
            left = length // 2
            for chunk in [body] if isinstance(body, bytes) else body:
                self.wfile.write(chunk[:left])
                left -= min(left, len(chunk))
                if not left:
                    break
            self._abort()
            return
        if isinstance(body, bytes):
            if body:
                self.wfile.write(body)
        else:
            for chunk in body:
                self.wfile.write(chunk)

    def _abort(self) -> None:
        reset_connection(self)

    def _reset_mid_request(self) -> None:
        length = self._body_length()
        if length and length > 0:
            self.rfile.read(max(length // 2, 1))
        self._abort()

    def _error(self, error: ObsServiceError) -> Response:
        xml = Xml("Error", None)
        xml.leaf("Code", error.code).leaf("Message", error.message)
        if error.resource:
            xml.leaf("Resource", error.resource)
        for name, value in error.extra.items():
            xml.leaf(name, value)
        xml.leaf("RequestId", self.request_id).leaf("HostId", self.request_id.lower() * 2)
        if self.command == "HEAD":
            return Response(error.status, {})
        return Response(error.status, {}, xml.bytes())

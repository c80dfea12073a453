"""The HTTP adapter of the fake OBS: path-style requests in, OBS-shaped responses out.
``wire.py`` holds the format helpers (XML, times, ranges, chunked bodies).

``ObsRequestHandler`` parses one request, authenticates it (``auth.py``), applies any fault
(``faults.py``), calls the backend (``models.py``) and answers in the header family the request
used: ``x-obs-*`` for OBS-protocol requests, ``x-amz-*`` otherwise. ``FakeObsServer`` runs it on
a ``ThreadingHTTPServer`` (HTTP/1.1, keep-alive) on 127.0.0.1, in a thread of this process or
as the main loop of ``python -m majob.emulator.obs``.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import secrets
import time
import traceback
from collections.abc import Iterator, Mapping
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import quote, unquote
from xml.etree import ElementTree

from majob.emulator.http import (
    CONTROL_PREFIX,
    EmulatorServer,
    LoopbackHTTPServer,
    control,
    reset_connection,
)
from majob.emulator.obs import auth
from majob.emulator.obs.faults import Fault, FaultInjector, FaultRule, LoggedRequest, RequestLog
from majob.emulator.obs.models import (
    MAX_DELETE_KEYS,
    Blob,
    FakeObject,
    ObsBackend,
    ObsServiceError,
    continuation_token,
    parse_continuation_token,
)
from majob.emulator.obs.wire import (
    BodyTooShort,
    Response,
    Xml,
    aws_chunked,
    child_text,
    children,
    find_text,
    http_time,
    int_arg,
    iso_time,
    malformed,
    parse_range,
    split_query,
)

S3_NS = "http://s3.amazonaws.com/doc/2006-03-01/"
OBS_NS = "http://obs.myhwclouds.com/doc/2015-06-30/"
CHUNK = 1 << 20


class _Httpd(LoopbackHTTPServer):
    fake: FakeObsServer


class FakeObsServer(EmulatorServer):
    """The fake OBS on 127.0.0.1. ``credentials`` maps access keys to secret keys (None: the
    documented test pair; empty: no signature checks); ``tokens`` maps the access keys that are
    temporary credentials to the security token they must send."""

    thread_name = "fake-obs"
    server_class = _Httpd

    def __init__(
        self,
        *,
        port: int = 0,
        data_dir: Path | None = None,
        credentials: Mapping[str, str] | None = None,
        region: str = "cn-north-4",
        seed: int = 0,
        tokens: Mapping[str, str] | None = None,
    ) -> None:
        self.backend = ObsBackend(data_dir, region=region)
        # Access keys that are temporary credentials: each must come with this security token.
        self.tokens: dict[str, str] = dict(tokens or {})
        self.credentials: Mapping[str, str] | None = (
            {auth.DEFAULT_ACCESS_KEY: auth.DEFAULT_SECRET_KEY}
            if credentials is None
            else credentials
        )
        self.faults = FaultInjector(seed=seed)
        self.log: RequestLog[LoggedRequest] = RequestLog()
        self.region = region
        super().__init__(ObsRequestHandler, port=port)

    def add_fault(self, **rule: Any) -> FaultRule:
        """Add a ``FaultRule`` (see its fields), e.g. ``add_fault(status=503, count=2)``."""
        return self.faults.add(FaultRule(**rule))

    def start(self) -> FakeObsServer:
        """Serve from a daemon thread of this process."""
        super().start()
        return self

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> FakeObsServer:
        return self.start()


class ObsRequestHandler(BaseHTTPRequestHandler):
    """One connection; requests on it are handled one after another (keep-alive)."""

    protocol_version = "HTTP/1.1"
    server_version = "OBS"
    sys_version = ""
    disable_nagle_algorithm = True
    server: _Httpd

    # -- plumbing ----------------------------------------------------------------------------

    def version_string(self) -> str:
        return "OBS"

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the request log is the record."""

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _handle(self) -> None:
        fake = self.server.fake
        raw_path, _, self.raw_query = self.path.partition("?")
        if raw_path.startswith(("http://", "https://")):
            raw_path = "/" + raw_path.split("/", 3)[-1] if raw_path.count("/") >= 3 else "/"
        self.raw_path = raw_path
        self.query = split_query(self.raw_query)
        self.args = dict(self.query)
        self.lower_headers = {name.lower(): value for name, value in self.headers.items()}
        authorization = self.lower_headers.get("authorization", "")
        self.family = (
            "obs"
            if authorization.startswith("OBS ")
            or any(h.startswith("x-obs-") for h in self.lower_headers)
            else "amz"
        )
        self.auth_kind = (
            "v4"
            if authorization.startswith("AWS4-")
            else "obs"
            if authorization.startswith("OBS ")
            else "v2"
            if authorization.startswith("AWS ")
            else "anonymous"
        )
        self.request_id = secrets.token_hex(8).upper()
        self.body_consumed = False
        path = unquote(raw_path)
        if path.startswith(CONTROL_PREFIX):
            self._send(self._control(path[len(CONTROL_PREFIX) :]))
            return
        fault = fake.faults.pick(self.command, path, self.raw_query)
        error_code: str | None = None
        if fault is not None and fault.latency:
            time.sleep(fault.latency)
        try:
            if fault is not None and fault.reset and self._body_length() != 0:
                self._reset_mid_request()
                fake.log.append(self._entry(path, 0, fault))
                return
            if fault is not None and fault.status is not None:
                self._drain()
                raise ObsServiceError(fault.status, fault.code, fault.message, resource=path)
            response = self._dispatch(path)
        except ObsServiceError as error:
            response = self._error(error)
            error_code = error.code
        except (BodyTooShort, ConnectionError):  # the client hung up in the middle of its body
            self.close_connection = True
            fake.log.append(self._entry(path, 499, fault))
            return
        except Exception as error:  # a bug of the fake: answer 500 rather than hang up
            traceback.print_exc()
            response = self._error(ObsServiceError(500, "InternalError", f"fake OBS: {error!r}"))
            error_code = "InternalError"
        if not self.body_consumed:
            try:
                self._drain()
            except (BodyTooShort, ConnectionError):
                self.close_connection = True
                return
        fake.log.append(self._entry(path, response.status, fault, error_code))
        if fault is not None and fault.reset:
            self._send(response, reset_half_way=True)
        else:
            self._send(response)

    def _entry(
        self, path: str, status: int, fault: Fault | None, error: str | None = None
    ) -> LoggedRequest:
        return LoggedRequest(
            self.command,
            path,
            self.raw_query,
            status,
            self.family,
            self.auth_kind,
            error,
            fault.label if fault else None,
        )

    def _send(self, response: Response, *, reset_half_way: bool = False) -> None:
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
            "Content-Length": str(length),
            **response.headers,
        }
        if isinstance(body, bytes) and body and "Content-Type" not in headers:
            headers["Content-Type"] = "application/xml"
        for name, value in headers.items():
            self.send_header(name, value)
        self.end_headers()
        if self.command == "HEAD":
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

    # -- bodies ------------------------------------------------------------------------------

    def _body_length(self) -> int | None:
        """Content-Length, or None for a chunked body."""
        if "chunked" in self.lower_headers.get("transfer-encoding", "").lower():
            return None
        return int(self.lower_headers.get("content-length", "0") or 0)

    def _chunks(self) -> Iterator[bytes]:
        """The request body as it arrives, de-chunked (HTTP chunked and aws-chunked)."""
        self.body_consumed = True
        length = self._body_length()
        if length is None:
            raw: Iterator[bytes] = self._http_chunks()
        else:
            raw = self._sized(length)
        sha = self.lower_headers.get("x-amz-content-sha256", "")
        encoding = self.lower_headers.get("content-encoding", "")
        if sha.startswith("STREAMING-") or "aws-chunked" in encoding:
            return aws_chunked(raw)
        return raw

    def _sized(self, length: int) -> Iterator[bytes]:
        left = length
        while left > 0:
            chunk = self.rfile.read(min(left, CHUNK))
            if not chunk:
                raise BodyTooShort
            left -= len(chunk)
            yield chunk

    def _http_chunks(self) -> Iterator[bytes]:
        while True:
            line = self.rfile.readline(65537)
            if not line:
                raise BodyTooShort
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                    pass
                return
            yield from self._sized(size)
            self.rfile.readline(65537)

    def _drain(self) -> None:
        if not self.body_consumed:
            for _ in self._chunks():
                pass

    def _read_small(self) -> bytes:
        return b"".join(self._chunks())

    def _receive_blob(self) -> Blob:
        """Stream the body into a blob, checking Content-MD5 and x-amz-content-sha256."""
        writer = self.server.fake.backend.new_writer()
        claimed_sha = self.lower_headers.get("x-amz-content-sha256", "")
        sha = hashlib.sha256() if len(claimed_sha) == 64 else None
        try:
            for chunk in self._chunks():
                writer.write(chunk)
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

    # -- routing -----------------------------------------------------------------------------

    def _dispatch(self, path: str) -> Response:
        fake = self.server.fake
        bucket, _, key = path.lstrip("/").partition("/")
        if bucket and "apiversion" in self.args and not key:
            # The SDK's unauthenticated signature negotiation probe.
            return Response(200, {"x-obs-api": "3.0"})
        if fake.credentials:
            access_key = auth.verify(
                auth.SignedRequest(self.command, self.raw_path, self.query, self.lower_headers),
                fake.credentials,
                fake.tokens,
            )
            if access_key is None:
                raise ObsServiceError(403, "AccessDenied", "Anonymous access is forbidden")
        if not bucket:
            if self.command == "GET":
                return self._list_buckets()
            raise ObsServiceError(405, "MethodNotAllowed", "The specified method is not allowed")
        if not key:
            return self._bucket_request(bucket)
        return self._object_request(bucket, key)

    def _bucket_request(self, bucket: str) -> Response:
        backend = self.server.fake.backend
        method, args = self.command, self.args
        if method == "PUT" and not args:
            body = self._read_small()
            location = find_text(body, "LocationConstraint") or find_text(body, "Location")
            backend.create_bucket(bucket, location)
            return Response(200, {"Location": f"/{bucket}"})
        if method == "HEAD" and not args:
            found = backend.bucket(bucket)
            return Response(200, {f"x-{self.family}-bucket-location": found.location})
        if method == "DELETE" and not args:
            backend.delete_bucket(bucket)
            return Response(204)
        if method == "GET" and "location" in args:
            found = backend.bucket(bucket)
            xml = Xml(
                "CreateBucketConfiguration" if self.family == "obs" else "LocationConstraint",
                self._ns(),
            )
            if self.family == "obs":
                xml.leaf("Location", found.location)
            else:
                xml.parts.append(found.location)
            return Response(200, body=xml.bytes())
        if method == "GET" and "uploads" in args:
            return self._list_uploads(bucket)
        if method == "GET" and (not args or set(args) <= _LIST_ARGS):
            return self._list_objects(bucket)
        if method == "POST" and "delete" in args:
            return self._delete_many(bucket)
        raise ObsServiceError(
            501, "NotImplemented", f"{method} with {', '.join(sorted(args))} is not emulated"
        )

    def _object_request(self, bucket: str, key: str) -> Response:
        backend = self.server.fake.backend
        method, args = self.command, self.args
        if method == "PUT" and "partNumber" in args and "uploadId" in args:
            number = int_arg(args, "partNumber")
            blob = self._receive_blob()
            part = backend.put_part(bucket, key, args["uploadId"], number, blob)
            return Response(200, {"ETag": f'"{part.etag}"'})
        if method == "PUT" and not args:
            if self._header("copy-source") is not None:
                raise ObsServiceError(501, "NotImplemented", "Copying objects is not emulated")
            self._check_bucket_exists(bucket)
            blob = self._receive_blob()
            obj = backend.put_object(
                bucket,
                key,
                blob,
                content_type=self.lower_headers.get("content-type"),
                metadata=self._metadata(),
            )
            return Response(200, {"ETag": f'"{obj.etag}"'})
        if method in ("GET", "HEAD") and "uploadId" in args:
            return self._list_parts(bucket, key, args["uploadId"])
        if method in ("GET", "HEAD") and not set(args) - _GET_ARGS:
            return self._get_object(bucket, key)
        if method == "DELETE" and "uploadId" in args:
            backend.abort_upload(bucket, key, args["uploadId"])
            return Response(204)
        if method == "DELETE" and not args:
            backend.delete_object(bucket, key)
            return Response(204)
        if method == "POST" and "uploads" in args:
            upload = backend.create_upload(
                bucket,
                key,
                content_type=self.lower_headers.get("content-type"),
                metadata=self._metadata(),
            )
            xml = Xml("InitiateMultipartUploadResult", self._ns())
            xml.leaf("Bucket", bucket).leaf("Key", key).leaf("UploadId", upload.upload_id)
            return Response(200, body=xml.bytes())
        if method == "POST" and "uploadId" in args:
            return self._complete(bucket, key, args["uploadId"])
        raise ObsServiceError(
            501, "NotImplemented", f"{method} with {', '.join(sorted(args))} is not emulated"
        )

    # -- operations --------------------------------------------------------------------------

    def _ns(self) -> str:
        return OBS_NS if self.family == "obs" else S3_NS

    def _header(self, name: str) -> str | None:
        return self.lower_headers.get(f"x-{self.family}-{name}")

    def _metadata(self) -> dict[str, str]:
        prefixes = ("x-obs-meta-", "x-amz-meta-")
        return {
            name[len(prefix) :]: value
            for name, value in self.lower_headers.items()
            for prefix in prefixes
            if name.startswith(prefix)
        }

    def _check_bucket_exists(self, bucket: str) -> None:
        self.server.fake.backend.bucket(bucket)

    def _object_headers(self, obj: FakeObject) -> dict[str, str]:
        headers = {
            "ETag": f'"{obj.etag}"',
            "Last-Modified": http_time(obj.last_modified),
            "Content-Type": obj.content_type,
            "Accept-Ranges": "bytes",
        }
        for name, value in obj.metadata.items():
            headers[f"x-{self.family}-meta-{name}"] = value
        return headers

    def _get_object(self, bucket: str, key: str) -> Response:
        obj = self.server.fake.backend.get_object(bucket, key)
        headers = self._object_headers(obj)
        for arg, header in _RESPONSE_OVERRIDES.items():
            if arg in self.args:
                headers[header] = self.args[arg]
        start, length, status = 0, obj.size, 200
        byte_range = self.lower_headers.get("range")
        if byte_range:
            parsed = parse_range(byte_range, obj.size)
            if parsed is not None:
                start, end = parsed
                length, status = end - start + 1, 206
                headers["Content-Range"] = f"bytes {start}-{end}/{obj.size}"
        if self.command == "HEAD":
            return Response(status, headers, b"", length)
        return Response(status, headers, obj.blob.read_range(start, length), length)

    def _list_objects(self, bucket: str) -> Response:
        backend = self.server.fake.backend
        args = self.args
        v2 = args.get("list-type") == "2"
        prefix = args.get("prefix", "")
        delimiter = args.get("delimiter", "")
        max_keys = int_arg(args, "max-keys", 1000)
        url_encode = args.get("encoding-type") == "url"
        if v2:
            token = args.get("continuation-token")
            marker = parse_continuation_token(token) if token else args.get("start-after", "")
        else:
            marker = args.get("marker", "")
        listing = backend.list_objects(
            bucket, prefix=prefix, marker=marker, delimiter=delimiter, max_keys=max_keys
        )

        def enc(text: str) -> str:
            return quote(text, safe="/") if url_encode else text

        xml = Xml("ListBucketResult", self._ns())
        xml.leaf("Name", bucket).leaf("Prefix", enc(prefix))
        if v2:
            if "continuation-token" in args:
                xml.leaf("ContinuationToken", args["continuation-token"])
            if "start-after" in args:
                xml.leaf("StartAfter", enc(args["start-after"]))
            xml.leaf("KeyCount", len(listing.objects) + len(listing.common_prefixes))
        else:
            xml.leaf("Marker", enc(marker))
        xml.leaf("MaxKeys", max_keys)
        if delimiter:
            xml.leaf("Delimiter", enc(delimiter))
        if url_encode:
            xml.leaf("EncodingType", "url")
        xml.leaf("IsTruncated", listing.is_truncated)
        if listing.next_marker is not None:
            if v2:
                xml.leaf("NextContinuationToken", continuation_token(listing.next_marker))
            else:
                xml.leaf("NextMarker", enc(listing.next_marker))
        for obj in listing.objects:
            xml.open("Contents").leaf("Key", enc(obj.key))
            xml.leaf("LastModified", iso_time(obj.last_modified)).leaf("ETag", f'"{obj.etag}"')
            xml.leaf("Size", obj.size)
            if not v2 or args.get("fetch-owner") == "true":
                xml.open("Owner").leaf("ID", "majobfakeowner").leaf("DisplayName", "majob")
                xml.close("Owner")
            xml.leaf("StorageClass", "STANDARD").close("Contents")
        for common in listing.common_prefixes:
            xml.open("CommonPrefixes").leaf("Prefix", enc(common)).close("CommonPrefixes")
        return Response(200, body=xml.bytes())

    def _list_buckets(self) -> Response:
        xml = Xml("ListAllMyBucketsResult", self._ns())
        xml.open("Owner").leaf("ID", "majobfakeowner").leaf("DisplayName", "majob").close("Owner")
        xml.open("Buckets")
        for bucket in self.server.fake.backend.list_buckets():
            xml.open("Bucket").leaf("Name", bucket.name)
            xml.leaf("CreationDate", iso_time(bucket.created))
            if self.family == "obs":
                xml.leaf("Location", bucket.location)
            xml.close("Bucket")
        xml.close("Buckets")
        return Response(200, body=xml.bytes())

    def _delete_many(self, bucket: str) -> Response:
        body = self._read_small()
        self._check_md5(hashlib.md5(body).digest())
        self._check_bucket_exists(bucket)
        try:
            root = ElementTree.fromstring(body)
        except ElementTree.ParseError as error:
            raise malformed() from error
        quiet = (child_text(root, "Quiet") or "false").lower() == "true"
        keys = [child_text(node, "Key") for node in children(root, "Object")]
        if len(keys) > MAX_DELETE_KEYS:
            raise malformed()
        xml = Xml("DeleteResult", self._ns())
        for key in keys:
            if not key:
                raise malformed()
            self.server.fake.backend.delete_object(bucket, key)
            if not quiet:
                xml.open("Deleted").leaf("Key", key).close("Deleted")
        return Response(200, body=xml.bytes())

    def _complete(self, bucket: str, key: str, upload_id: str) -> Response:
        body = self._read_small()
        try:
            root = ElementTree.fromstring(body)
            parts = [
                (int(child_text(node, "PartNumber") or ""), child_text(node, "ETag") or "")
                for node in children(root, "Part")
            ]
        except (ElementTree.ParseError, ValueError) as error:
            raise malformed() from error
        obj = self.server.fake.backend.complete_upload(bucket, key, upload_id, parts)
        xml = Xml("CompleteMultipartUploadResult", self._ns())
        xml.leaf("Location", f"/{bucket}/{quote(key)}").leaf("Bucket", bucket).leaf("Key", key)
        xml.leaf("ETag", f'"{obj.etag}"')
        return Response(200, body=xml.bytes())

    def _list_uploads(self, bucket: str) -> Response:
        prefix = self.args.get("prefix", "")
        uploads = self.server.fake.backend.list_uploads(bucket, prefix)
        xml = Xml("ListMultipartUploadsResult", self._ns())
        xml.leaf("Bucket", bucket).leaf("KeyMarker", "").leaf("UploadIdMarker", "")
        xml.leaf("Prefix", prefix).leaf("MaxUploads", 1000).leaf("IsTruncated", False)
        for upload in uploads:
            xml.open("Upload").leaf("Key", upload.key).leaf("UploadId", upload.upload_id)
            xml.open("Initiator").leaf("ID", "majobfakeowner").close("Initiator")
            xml.open("Owner").leaf("ID", "majobfakeowner").close("Owner")
            xml.leaf("StorageClass", "STANDARD").leaf("Initiated", iso_time(upload.initiated))
            xml.close("Upload")
        return Response(200, body=xml.bytes())

    def _list_parts(self, bucket: str, key: str, upload_id: str) -> Response:
        parts = self.server.fake.backend.list_parts(bucket, key, upload_id)
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

    # -- control plane -----------------------------------------------------------------------

    def _control(self, what: str) -> Response:
        """The shared control plane (``/_majob/log``, ``/_majob/faults``): lets a test drive a
        fake that runs in another process."""
        fake = self.server.fake
        answer = control(what, self.command, self._read_small(), fake.faults, fake.log)
        status, payload = answer if answer is not None else (404, {"error": "unknown"})
        return Response(
            status, {"Content-Type": "application/json"}, json.dumps(payload).encode("utf-8")
        )


_LIST_ARGS = {
    "prefix", "marker", "max-keys", "delimiter", "encoding-type", "list-type",
    "continuation-token", "start-after", "fetch-owner",
}  # fmt: skip
_RESPONSE_OVERRIDES = {
    "response-content-type": "Content-Type",
    "response-content-language": "Content-Language",
    "response-expires": "Expires",
    "response-cache-control": "Cache-Control",
    "response-content-disposition": "Content-Disposition",
    "response-content-encoding": "Content-Encoding",
}
_GET_ARGS = set(_RESPONSE_OVERRIDES) | {"x-id"}

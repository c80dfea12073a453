"""``ObsObjectStore``: the ``ObjectStore`` protocol on esdk-obs-python.

This is the only module that imports the OBS SDK (``obs``), and only when a store is opened.
The SDK returns HTTP errors as results and raises network errors and plain ``Exception``s;
``storage_error`` is the one place that turns any of them into a ``StorageError`` subclass that
names the OBS error code, the object and the request id, and never the secret key.

Retries are ours, not the SDK's (it is built with ``max_retry_count=0``): the SDK does not retry
file-object bodies or parts, and one policy for every call is easier to reason about. ``_call``
applies the one rule of ``storage/retry.py`` (5xx, throttling and connection failures; at most
``retries`` more requests within ``timeout`` seconds); nothing above the store retries again.

Only the SDK's and the network's failures become ``StorageError``s (their cause kept, for
``MAJOB_DEBUG=1``); an exception raised by majob's own code is a bug and propagates unchanged.
An answer the SDK could not parse (it then hands back no body) is a ``StorageError`` too.
Listings ask for ``encoding-type=url``: keys with control characters cannot travel raw in XML.
"""

from __future__ import annotations

import calendar
import contextlib
import functools
import hashlib
import http.client
import os
import re
import secrets
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any, TypeVar

from majob.errors import (
    MajobError,
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
    UserInputError,
)
from majob.masking import Masker
from majob.storage.base import ListPage, MultipartUpload, ObjectInfo, UploadedPart
from majob.storage.config import Credentials, ObsConfig
from majob.storage.retry import call_retrying, is_transient
from majob.text import counted

T = TypeVar("T")
INSTALL_HINT = "install the OBS extra: pip install 'majob[obs]'"
AUTH_CODES = frozenset(
    {
        "SignatureDoesNotMatch",
        "InvalidAccessKeyId",
        "AccessDenied",
        "RequestTimeTooSkewed",
        "ExpiredToken",
        "InvalidToken",
        "InvalidSecurity",
        "TokenRefreshRequired",
        "AllAccessDisabled",
        # The account's or the user's state (OBS server-side error codes, all 403 Forbidden).
        "AccessForbidden",
        "AccountProblem",
        "DeregisterUserId",
        "FrozenUserId",
    }
)
NOT_FOUND_CODES = frozenset({"NoSuchKey", "NoSuchBucket", "NoSuchUpload"})
INTEGRITY_CODES = frozenset({"BadDigest", "InvalidDigest", "XAmzContentSHA256Mismatch"})
_READ_CHUNK = 1 << 20
_DELETE_BATCH = 1000
# XML 1.0's Char production: what a DeleteObjects document can hold at all.
_XML_CHAR = re.compile(r"[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")

# Response headers the SDK hands back, prefixes removed, mixed with the custom metadata; these
# are the standard ones, so what is left is metadata.
_STANDARD_HEADERS = frozenset(
    {
        "content-type", "content-md5", "checksum-crc64ecma", "content-length",
        "content-language", "expires", "origin", "cache-control", "content-disposition",
        "content-encoding", "x-default-storage-class", "location", "date", "etag", "host",
        "last-modified", "content-range", "x-reserved", "access-control-allow-origin",
        "access-control-allow-headers", "access-control-max-age",
        "access-control-allow-methods", "access-control-expose-headers", "connection",
        "x-reserved-indicator", "x-oef-request-id", "request-id", "id-2", "storage-class",
        "version-id", "server-side-encryption", "server-side-encryption-aws-kms-key-id",
        "server-side-encryption-kms-key-id", "server-side-encryption-customer-algorithm",
        "server-side-encryption-customer-key-md5", "restore", "expiration", "object-type",
        "next-append-position", "hash-crc64ecma", "website-redirect-location",
        "delete-marker", "tagging-count", "bucket-location", "api", "mp-upload-id",
    }
)  # fmt: skip


def storage_error(
    failure: object,
    *,
    action: str,
    bucket: str | None = None,
    key: str | None = None,
    secrets: Sequence[str] = (),
) -> StorageError:
    """The one mapping from an SDK failure (a returned result with status >= 300, or a raised
    exception) to the ``StorageError`` tree. ``secrets`` are masked in every message."""
    clean = Masker(secrets).text
    where: dict[str, Any] = {"bucket": bucket, "key": key}
    if isinstance(failure, BaseException):
        reason = clean(str(failure) or type(failure).__name__)
        if isinstance(failure, socket.gaierror):
            return StorageUnreachable(
                f"{action}: cannot resolve the OBS host ({reason})",
                hint="check MAJOB_OBS_ENDPOINT / MAJOB_OBS_REGION and the network",
                **where,
            )
        if isinstance(failure, TimeoutError):
            return StorageUnreachable(
                f"{action}: OBS did not answer in time ({reason})",
                hint="check the endpoint and the network, or raise MAJOB_OBS_TIMEOUT",
                **where,
            )
        if isinstance(failure, ConnectionRefusedError):
            return StorageUnreachable(
                f"{action}: connection refused by the OBS endpoint",
                hint="check MAJOB_OBS_ENDPOINT (is the emulator running?)",
                **where,
            )
        if isinstance(failure, (OSError, http.client.HTTPException)):
            return StorageUnreachable(
                f"{action}: the connection to OBS failed ({type(failure).__name__}: {reason})",
                **where,
            )
        return StorageError(f"{action} failed: {reason}", **where)
    status = int(getattr(failure, "status", 0) or 0)
    code = getattr(failure, "errorCode", None) or None
    message = clean(str(getattr(failure, "errorMessage", None) or getattr(failure, "reason", "")))
    request_id = getattr(failure, "requestId", None) or None
    text = f"{action}: {message}" if message else f"{action}: OBS answered HTTP {status}"
    details: dict[str, Any] = {**where, "code": code, "request_id": request_id, "status": status}
    if code in AUTH_CODES or (status == 403 and code is None):
        return StorageAuthError(
            text,
            hint="check the access key and secret key (HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK "
            "or the credentials file) and the bucket's permissions",
            **details,
        )
    if code in NOT_FOUND_CODES or status == 404:
        return StorageNotFound(text, **details)
    if code in INTEGRITY_CODES:
        return StorageIntegrityError(text, **details)
    return StorageError(text, **details)


is_retryable = is_transient  # the one rule (storage/retry.py), under the name callers know

# Failures of the network: whatever majob's code was doing, the request did not get through.
_NETWORK_ERRORS: tuple[type[BaseException], ...] = (
    ConnectionError,
    TimeoutError,
    socket.gaierror,
    socket.herror,
    ssl.SSLError,
    http.client.HTTPException,
)


def xml_carries(key: str) -> bool:
    """Whether ``key`` reaches OBS intact inside a DeleteObjects XML document.

    Not when it holds a character XML 1.0 does not allow (``\\x01``, ESC, NUL...: the whole
    document is MalformedXML), nor a ``\\r``: the SDK writes it raw, and XML end-of-line
    handling reads it as ``\\n`` (``a\\rb`` would delete ``a\\nb``)."""
    return "\r" not in key and _XML_CHAR.fullmatch(key) is not None


def _raised_in(error: BaseException, package_dir: str) -> bool:
    """Whether the innermost frame of ``error``'s traceback is in ``package_dir``."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(package_dir)


def malformed(action: str, what: str, *, bucket: str | None, key: str | None) -> StorageError:
    """The error for an answer majob cannot read (a torn or unparsable response)."""
    return StorageError(
        f"{action}: OBS sent {what} that majob cannot read",
        hint="try again; if it persists, run with MAJOB_DEBUG=1 and report the endpoint",
        bucket=bucket,
        key=key,
    )


def _etag(value: object) -> str:
    return str(value or "").strip('"').lower()


def _epoch(value: object) -> float:
    if not value:
        return 0.0
    text = str(value)
    if len(text) == 19 and text[4] == "/" and text[10] == " ":
        # "YYYY/MM/DD HH:MM:SS", what the SDK makes of every listing's dates: read directly,
        # not by trying formats (that cost ~0.1 s per 1,000 keys).
        with contextlib.suppress(ValueError):
            return calendar.timegm(
                (int(text[:4]), int(text[5:7]), int(text[8:10]),
                 int(text[11:13]), int(text[14:16]), int(text[17:19]), 0, 0, 0)
            )  # fmt: skip
    try:
        return parsedate_to_datetime(text).timestamp()
    except (TypeError, ValueError):
        pass
    from datetime import datetime, timezone

    for pattern in ("%Y/%m/%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ"):
        try:
            return datetime.strptime(text, pattern).replace(tzinfo=timezone.utc).timestamp()
        except ValueError:
            continue
    return 0.0


def _local_epoch(value: object) -> float:
    """Seconds since the epoch from the SDK's ``Initiated`` of an upload, which it turns into
    local time ("YYYY/MM/DD HH:MM:SS"); 0.0 when missing or unreadable."""
    try:
        return time.mktime(time.strptime(str(value), "%Y/%m/%d %H:%M:%S"))
    except (TypeError, ValueError, OverflowError):
        return 0.0


def metadata_from_headers(header: object) -> dict[str, str]:
    """Custom metadata from the SDK's ``(name, value)`` header list."""
    pairs = header if isinstance(header, list) else []
    return {
        str(name).lower(): str(value)
        for name, value in pairs
        if str(name).lower() not in _STANDARD_HEADERS
    }


def _import_sdk() -> Any:
    try:
        import obs
    except ImportError as error:  # pragma: no cover - depends on the environment
        raise UserInputError(
            "the OBS SDK (esdk-obs-python) is not installed", hint=INSTALL_HINT
        ) from error
    return obs


def _list_page(body: Any) -> ListPage:
    """A page from the SDK's parsed listing; raises on a missing field."""
    objects: list[ObjectInfo] = []
    for item in body.contents or []:
        if not isinstance(item.key, str) or not item.key:
            raise ValueError("an entry without a key")
        objects.append(
            ObjectInfo(
                key=item.key,
                size=int(item.size or 0),
                etag=_etag(item.etag),
                last_modified=_epoch(item.lastModified),
            )
        )
    truncated = bool(body.is_truncated)
    next_marker = (
        (body.next_marker or (objects[-1].key if objects else None)) if truncated else None
    )
    if truncated and next_marker is None:
        raise ValueError("a truncated page without a marker")
    return ListPage(objects, next_marker)


@functools.cache
def _closing_client_class(sdk: Any) -> Any:
    """``ObsClient`` that closes the connection a failed send leaves open.

    When sending a request raises (a reset in the middle of a body, a time-out), the SDK's
    ``_make_request_with_retry`` has not yet been handed the connection and closes ``None``: the
    socket leaks (a ``ResourceWarning`` per failure). This subclass remembers the connection it
    handed out on this thread and closes it when the request fails. It relies on two internal
    methods of esdk-obs-python 3.x; without them it falls back to the plain client.
    """
    base = sdk.ObsClient
    if not all(
        hasattr(base, name) for name in ("_get_server_connection", "_make_request_internal")
    ):
        return base  # pragma: no cover - another SDK version
    local = threading.local()

    class ClosingObsClient(base):  # type: ignore[misc, valid-type]
        def _get_server_connection(self, *args: Any, **kwargs: Any) -> Any:
            connection = super()._get_server_connection(*args, **kwargs)
            local.connection = connection
            return connection

        def _make_request_internal(self, *args: Any, **kwargs: Any) -> Any:
            local.connection = None
            try:
                return super()._make_request_internal(*args, **kwargs)
            except Exception:
                connection, local.connection = local.connection, None
                if connection is not None:
                    with contextlib.suppress(Exception):
                        connection.close()
                raise

    return ClosingObsClient


class ObsObjectStore:
    """``ObjectStore`` on one shared, keep-alive ``ObsClient`` (safe to use from threads)."""

    def __init__(self, config: ObsConfig, credentials: Credentials | None = None) -> None:
        self.config = config
        creds = credentials or config.resolved_credentials()
        self._secrets = creds.secrets()
        self._sdk = _import_sdk()
        endpoint = config.resolved_endpoint()
        options: dict[str, Any] = {
            "signature": config.signature,
            "region": config.resolved_region(),
        }
        if config.signature == "obs":
            # Path-style (any IP endpoint) turns the OBS signature into V2 unless in workflow mode.
            options["client_mode"] = "workflow"
        self._client = _closing_client_class(self._sdk)(
            access_key_id=creds.access_key,
            secret_access_key=creds.secret_key,
            security_token=creds.security_token,
            server=endpoint,
            long_conn_mode=True,
            max_retry_count=0,
            timeout=max(1, round(config.timeout)),
            chunk_size=_READ_CHUNK,
            **options,
        )
        # The shortest request seen (seconds): how far the endpoint is (transfer.default_jobs).
        self.fastest_request: float | None = None
        self._sdk_dir = os.path.dirname(os.path.abspath(self._sdk.__file__)) + os.sep

    # -- plumbing ----------------------------------------------------------------------------

    def _call(self, action: str, bucket: str, key: str | None, call: Callable[[], T]) -> T:
        """Run ``call`` (one SDK request), map its failure, retry what is worth retrying."""
        return call_retrying(
            functools.partial(self._attempt, action, bucket, key, call),
            self.config.retries,
            self.config.timeout,
        )

    def _attempt(self, action: str, bucket: str, key: str | None, call: Callable[[], T]) -> T:
        """One try of ``call``: its result, or its failure as a ``StorageError``."""
        started = time.perf_counter()
        failure: Exception | None = None
        try:
            result = call()
        except MajobError:
            raise  # already ours (e.g. a failed MD5 check while streaming)
        except Exception as error:
            if not self._is_sdk_failure(error):
                raise  # a bug in majob: its traceback must not be hidden
            failure = error
        if failure is not None:
            # Raised outside the ``except``, chained to a masked stand-in: the SDK's exception
            # may quote a secret, and as a cause or context it would be in every traceback.
            raise storage_error(
                failure, action=action, bucket=bucket, key=key, secrets=self._secrets
            ) from Masker(self._secrets).exception(failure)
        if result is None:
            raise malformed(action, "no answer", bucket=bucket, key=key)
        took = time.perf_counter() - started
        if self.fastest_request is None or took < self.fastest_request:
            self.fastest_request = took  # a race only loses one sample
        if int(getattr(result, "status", 0) or 0) >= 300:
            raise storage_error(
                result, action=action, bucket=bucket, key=key, secrets=self._secrets
            )
        return result

    def _is_sdk_failure(self, error: BaseException) -> bool:
        """The network failed, or the SDK raised (its plain ``Exception``s included)."""
        return (
            isinstance(error, _NETWORK_ERRORS)
            or type(error) is Exception
            or _raised_in(error, self._sdk_dir)
        )

    def _read(
        self, action: str, bucket: str, key: str | None, result: Any, read: Callable[[Any], T]
    ) -> T:
        """``read(result.body)``; a missing body or field (the SDK could not parse the answer)
        is a ``StorageError``, with the parse failure as its cause."""
        if getattr(result, "body", None) is None:
            raise malformed(action, "an answer", bucket=bucket, key=key)
        try:
            return read(result.body)
        except (AttributeError, TypeError, ValueError, KeyError) as error:
            raise malformed(action, "an answer", bucket=bucket, key=key) from error

    # -- listing and metadata ----------------------------------------------------------------

    def list_page(
        self, bucket: str, prefix: str, *, marker: str | None = None, max_keys: int = 1000
    ) -> ListPage:
        result = self._call(
            "list objects",
            bucket,
            prefix,
            lambda: self._client.listObjects(
                bucket,
                prefix=prefix or None,
                marker=marker or None,
                max_keys=max_keys,
                encoding_type="url",  # the SDK decodes the keys when the answer says "url"
            ),
        )
        if getattr(result, "body", None) is None:
            raise malformed("list objects", "a listing", bucket=bucket, key=prefix or None)
        try:
            return _list_page(result.body)
        except (AttributeError, TypeError, ValueError) as error:
            raise malformed(
                "list objects", "a listing", bucket=bucket, key=prefix or None
            ) from error

    def list_all(self, bucket: str, prefix: str) -> Iterator[ObjectInfo]:
        marker: str | None = None
        while True:
            page = self.list_page(bucket, prefix, marker=marker)
            yield from page.objects
            if page.next_marker is None:
                return
            marker = page.next_marker

    def head(self, bucket: str, key: str) -> ObjectInfo | None:
        try:
            result = self._call(
                "head object", bucket, key, lambda: self._client.getObjectMetadata(bucket, key)
            )
        except StorageNotFound:
            return None
        return self._read(
            "head object",
            bucket,
            key,
            result,
            lambda body: ObjectInfo(
                key=key,
                size=int(body.contentLength or 0),
                etag=_etag(body.etag),
                last_modified=_epoch(body.lastModified),
                metadata=metadata_from_headers(result.header),
            ),
        )

    # -- single-request transfers ------------------------------------------------------------

    def put_file(
        self,
        bucket: str,
        key: str,
        path: Path,
        *,
        content_md5: str | None = None,
        metadata: Mapping[str, str] | None = None,
    ) -> ObjectInfo:
        if not path.is_file():
            raise UserInputError(f"{path} is not a file")
        size = path.stat().st_size

        def put() -> Any:
            # A fresh header each time: the SDK modifies the one it is given.
            header = self._sdk.PutObjectHeader(md5=content_md5, contentLength=size)
            return self._client.putFile(
                bucket, key, str(path), metadata=dict(metadata or {}), headers=header
            )

        result = self._call("upload file", bucket, key, put)
        etag = self._read("upload file", bucket, key, result, lambda body: _etag(body.etag))
        return ObjectInfo(key, size, etag, metadata=dict(metadata or {}))

    def put_bytes(
        self,
        bucket: str,
        key: str,
        data: bytes,
        *,
        metadata: Mapping[str, str] | None = None,
    ) -> ObjectInfo:
        result = self._call(
            "upload object",
            bucket,
            key,
            lambda: self._client.putContent(bucket, key, data, metadata=dict(metadata or {})),
        )
        etag = self._read("upload object", bucket, key, result, lambda body: _etag(body.etag))
        return ObjectInfo(key, len(data), etag, metadata=dict(metadata or {}))

    def get_bytes(self, bucket: str, key: str) -> bytes:
        result = self._call(
            "download object",
            bucket,
            key,
            lambda: self._client.getObject(bucket, key, loadStreamInMemory=True),
        )
        return self._read(
            "download object", bucket, key, result, lambda body: bytes(body.buffer or b"")
        )

    def get_file(self, bucket: str, key: str, path: Path) -> ObjectInfo:
        """Download to ``path`` atomically (a temporary file, then a rename); the MD5 is checked
        against the ETag when the object was not uploaded in parts."""
        info: list[ObjectInfo] = []

        def download() -> Any:
            result = self._client.getObject(bucket, key)
            if int(getattr(result, "status", 0) or 0) >= 300:
                return result
            info.clear()
            info.append(self._stream_to(result, bucket, key, path))
            return result

        self._call("download object", bucket, key, download)
        return info[0]

    def _stream_to(self, result: Any, bucket: str, key: str, path: Path) -> ObjectInfo:
        response = getattr(getattr(result, "body", None), "response", None)
        if response is None:
            raise malformed("download object", "an answer", bucket=bucket, key=key)
        try:
            return self._write_stream(result, response, bucket, key, path)
        except OSError as error:
            if isinstance(error, _NETWORK_ERRORS):
                raise
            # The local disk, not OBS: no retry, and the path in the message.
            raise StorageError(
                f"download object: cannot write {path} ({error.strerror or error})",
                hint="check the free space and permissions of the destination",
                bucket=bucket,
                key=key,
            ) from error

    def _write_stream(
        self, result: Any, response: Any, bucket: str, key: str, path: Path
    ) -> ObjectInfo:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp = path.with_name(f".{path.name}.majob-{secrets.token_hex(4)}")
        md5 = hashlib.md5()
        size = 0
        try:
            with temp.open("wb") as out:
                while chunk := response.read(_READ_CHUNK):
                    md5.update(chunk)
                    out.write(chunk)
                    size += len(chunk)
            etag = _etag(result.body.etag)
            expected = result.body.contentLength
            if expected is not None and int(expected) != size:
                raise http.client.IncompleteRead(b"", int(expected) - size)
            if "-" not in etag and len(etag) == 32 and etag != md5.hexdigest():
                raise StorageIntegrityError(
                    "download object: the MD5 of the received data does not match the ETag",
                    bucket=bucket,
                    key=key,
                )
            os.replace(temp, path)
        finally:
            response.close()
            temp.unlink(missing_ok=True)
        return ObjectInfo(
            key,
            size,
            etag,
            last_modified=_epoch(result.body.lastModified),
            metadata=metadata_from_headers(result.header),
        )

    def delete_many(self, bucket: str, keys: Sequence[str]) -> None:
        """Delete ``keys``: in DeleteObjects batches of 1000 the keys XML carries as they are,
        one DELETE each for the others (see ``xml_carries``). A key that is not deleted is the
        one the ``StorageError`` names."""
        batched = [key for key in keys if xml_carries(key)]
        for start in range(0, len(batched), _DELETE_BATCH):
            self._delete_batch(bucket, batched[start : start + _DELETE_BATCH])
        for key in keys:
            if not xml_carries(key):
                self._delete_one(bucket, key)

    def _delete_batch(self, bucket: str, batch: list[str]) -> None:
        request = self._sdk.DeleteObjectsRequest(
            quiet=True, objects=[self._sdk.Object(key=k) for k in batch]
        )
        # A refused request is no one key's failure: it names none.
        action = f"delete objects (a batch of {counted(len(batch), 'key')})"
        try:
            result = self._call(
                action, bucket, None, functools.partial(self._delete, bucket, request)
            )
        except StorageError as error:
            if error.code != "MalformedXML":
                raise
            # The server could not read the batch (a character it refuses that majob sent as
            # XML): each key alone, so the one at fault is named and the others are deleted.
            for key in batch:
                self._delete_one(bucket, key)
            return
        failed = list(getattr(result.body, "error", None) or [])
        if failed:
            first = failed[0]
            raise StorageError(
                f"delete objects: {len(failed)} of {len(batch)} keys were not deleted "
                f"({first.message or first.code})",
                code=first.code,
                bucket=bucket,
                key=first.key,
                request_id=result.requestId,
                status=result.status,
            )

    def _delete_one(self, bucket: str, key: str) -> None:
        self._call("delete object", bucket, key, lambda: self._client.deleteObject(bucket, key))

    def _delete(self, bucket: str, request: Any) -> Any:
        return self._client.deleteObjects(bucket, request)

    # -- multipart ---------------------------------------------------------------------------

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
            body = self._read("list multipart uploads", bucket, prefix, result, lambda b: b)
            uploads.extend(
                self._read(
                    "list multipart uploads",
                    bucket,
                    prefix,
                    result,
                    lambda b: [
                        MultipartUpload(u.key, u.uploadId, _local_epoch(u.initiated))
                        for u in b.upload or []
                    ],
                )
            )
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
            body = self._read("list parts", bucket, upload.key, result, lambda b: b)
            parts.extend(
                self._read(
                    "list parts",
                    bucket,
                    upload.key,
                    result,
                    lambda b: [
                        UploadedPart(int(p.partNumber), _etag(p.etag), int(p.size or 0))
                        for p in b.parts or []
                    ],
                )
            )
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
        """Send ``size`` bytes of ``path`` from ``offset``; ``content_md5`` (base64) makes the
        server refuse a part that does not arrive as it was read."""
        result = self._call(
            f"upload part {number}",
            bucket,
            upload.key,
            lambda: self._client.uploadPart(
                bucket,
                upload.key,
                number,
                upload.upload_id,
                object=str(path),
                isFile=True,
                partSize=size,
                offset=offset,
                md5=content_md5,
            ),
        )
        etag = self._read(f"upload part {number}", bucket, upload.key, result, lambda b: b.etag)
        return UploadedPart(number, _etag(etag), size)

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
        return ObjectInfo(upload.key, sum(p.size for p in ordered), _etag(etag))

    def abort_multipart(self, bucket: str, upload: MultipartUpload) -> None:
        with contextlib.suppress(StorageNotFound):  # already gone: what aborting wants
            self._call(
                "abort multipart upload",
                bucket,
                upload.key,
                lambda: self._client.abortMultipartUpload(bucket, upload.key, upload.upload_id),
            )

    def close(self) -> None:
        self._client.close()

    def __enter__(self) -> ObsObjectStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_store(config: ObsConfig | None = None) -> ObsObjectStore:
    """The store the CLI and sync use: ``config`` or the ``MAJOB_OBS_*`` environment."""
    return ObsObjectStore(config or ObsConfig.from_env())

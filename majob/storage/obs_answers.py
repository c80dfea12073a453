"""Reading what esdk-obs-python hands back: ETags, dates, custom metadata, a listing page, and a
downloaded body streamed to a file.

Every reader raises on a missing or malformed field (``AttributeError``, ``TypeError``,
``ValueError``) and leaves it to the store to call that a ``malformed`` answer; none of them
sends a request.
"""

from __future__ import annotations

import calendar
import contextlib
import hashlib
import http.client
import os
import secrets
import time
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any

from majob.errors import StorageError, StorageIntegrityError
from majob.storage.base import ListPage, ObjectInfo
from majob.storage.obs_failures import NETWORK_ERRORS, malformed
from majob.storage.plan import md5_of

READ_CHUNK = 1 << 20

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


def plain_etag(value: object) -> str:
    """An ETag as majob compares them: no quotes, lower case."""
    return str(value or "").strip('"').lower()


def epoch(value: object) -> float:
    """Seconds since the epoch (UTC) from a date the SDK gives; 0.0 when unreadable."""
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


def local_epoch(value: object) -> float:
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


def read_list_page(body: Any) -> ListPage:
    """A page from the SDK's parsed listing; raises on a missing field."""
    objects: list[ObjectInfo] = []
    for item in body.contents or []:
        if not isinstance(item.key, str) or not item.key:
            raise ValueError("an entry without a key")
        objects.append(
            ObjectInfo(
                key=item.key,
                size=int(item.size or 0),
                etag=plain_etag(item.etag),
                last_modified=epoch(item.lastModified),
            )
        )
    truncated = bool(body.is_truncated)
    next_marker = (
        (body.next_marker or (objects[-1].key if objects else None)) if truncated else None
    )
    if truncated and next_marker is None:
        raise ValueError("a truncated page without a marker")
    return ListPage(objects, next_marker)


def stream_to_file(result: Any, bucket: str, key: str, path: Path) -> ObjectInfo:
    """Write the body of the SDK's GET answer (``getObject`` without a download path) to
    ``path``, as ``write_body`` does."""
    response = getattr(getattr(result, "body", None), "response", None)
    if response is None:
        raise malformed("download object", "an answer", bucket=bucket, key=key)
    info = ObjectInfo(
        key,
        int(result.body.contentLength or 0),
        plain_etag(result.body.etag),
        last_modified=epoch(result.body.lastModified),
        metadata=metadata_from_headers(result.header),
    )
    try:
        return write_body(response, info, bucket, path, sized=result.body.contentLength is not None)
    finally:
        response.close()


@dataclass(frozen=True)
class Received:
    """A GET answer whose body is on disk: its ``status`` (what the store's request path reads)
    and the object."""

    status: int
    info: ObjectInfo


def receive_to_file(client: Any, util: Any, bucket: str, key: str, path: Path, conn: Any) -> Any:
    """Read the answer to a GET sent on ``conn`` (the SDK's ``parseMethod``): an error answer
    parsed by the SDK (what the store maps to a ``StorageError``), or the body streamed to
    ``path`` by ``write_body`` (a ``Received``). The SDK's own reading of a GET (a wrapper that
    builds a CRC-64 table per answer, model objects) costs more than the request on loopback;
    this reads the status, the headers and the body, no more. On a failure the SDK closes the
    connection; on success it goes back to the SDK's pool."""
    response = conn.getresponse()
    if int(response.status) >= 300:
        try:
            return client._parse_xml_internal(response)
        finally:
            util.do_close(response, conn, client.connHolder, client.log_client)
    try:
        headers = {name.lower(): value for name, value in response.getheaders()}
        length = headers.get("content-length")
        info = ObjectInfo(
            key,
            int(length or 0),
            plain_etag(headers.get("etag")),
            last_modified=epoch(headers.get("last-modified")),
            metadata=metadata_from_headers(client._rename_response_headers(headers)),
        )
        got = write_body(response, info, bucket, path, sized=length is not None)
    except BaseException:
        response.close()
        raise
    util.do_close(response, conn, client.connHolder, client.log_client)
    return Received(int(response.status), got)


def write_body(
    response: Any, info: ObjectInfo, bucket: str, path: Path, *, sized: bool
) -> ObjectInfo:
    """Write a GET answer's body to ``path`` atomically (a temporary file, then a rename), its
    size checked (when the answer said it, ``sized``) and its MD5 checked against the one the
    object carries: the ETag of a single PUT, or the ``md5`` metadata majob stores on its
    multipart uploads. A failure of the local disk is a ``StorageError`` naming the path (its
    ``OSError`` the cause); the network's propagates (the store maps it and may send the
    request again)."""
    try:
        return _write_stream(response, info, bucket, path, sized)
    except OSError as error:
        if isinstance(error, NETWORK_ERRORS):
            raise
        # The local disk, not OBS: no retry, and the path in the message.
        raise StorageError(
            f"download object: cannot write {path} ({error.strerror or error})",
            hint="check the free space and permissions of the destination",
            bucket=bucket,
            key=info.key,
        ) from error


def _write_stream(
    response: Any, info: ObjectInfo, bucket: str, path: Path, sized: bool
) -> ObjectInfo:
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_name(f".{path.name[:40]}.majob-{secrets.token_hex(4)}")
    md5 = hashlib.md5()
    size = 0
    try:
        with temp.open("wb") as out:
            while chunk := response.read(READ_CHUNK):
                md5.update(chunk)
                out.write(chunk)
                size += len(chunk)
        if sized and info.size != size:
            raise http.client.IncompleteRead(b"", info.size - size)
        expected = md5_of(info)
        if expected is not None and expected != md5.hexdigest():
            said = "the ETag" if expected == info.etag else "the md5 the object carries"
            raise StorageIntegrityError(
                f"download object: the MD5 of the received data does not match {said}",
                bucket=bucket,
                key=info.key,
            )
        os.replace(temp, path)
    finally:
        temp.unlink(missing_ok=True)
    return ObjectInfo(info.key, size, info.etag, info.last_modified, info.metadata)

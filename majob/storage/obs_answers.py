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
import itertools
import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from majob.errors import StorageError, StorageIntegrityError
from majob.storage.base import ListPage, ObjectInfo
from majob.storage.obs_failures import NETWORK_ERRORS, malformed
from majob.storage.plan import MD5_METADATA, md5_of, part_size_of

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


def wire_metadata(headers: dict[str, str]) -> dict[str, str]:
    """Custom metadata from a GET answer's headers (names lower case), as the SDK renames them
    for ``metadata_from_headers``: ``x-amz-meta-``/``x-obs-meta-`` names and values URL-decoded,
    other ``x-amz-``/``x-obs-`` names without the prefix; the rest are HTTP's own."""
    renamed: list[tuple[str, str]] = []
    for name, value in headers.items():
        for prefix in ("x-amz-meta-", "x-obs-meta-"):
            if name.startswith(prefix):
                renamed.append((unquote(name[len(prefix) :]), unquote(value)))
                break
        else:
            if name.startswith(("x-amz-", "x-obs-")):
                renamed.append((name[6:], unquote(value)))
    return metadata_from_headers(renamed)


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
        metadata = metadata_from_headers(client._rename_response_headers(headers))
        info = answer_info(key, headers, metadata)
        got = write_body(response, info, bucket, path, sized=length is not None)
    except BaseException:
        response.close()
        raise
    util.do_close(response, conn, client.connHolder, client.log_client)
    return Received(int(response.status), got)


def answer_info(key: str, headers: dict[str, str], metadata: dict[str, str]) -> ObjectInfo:
    """The object a GET answer's (lower-cased) ``headers`` describe."""
    return ObjectInfo(
        key,
        int(headers.get("content-length") or 0),
        plain_etag(headers.get("etag")),
        last_modified=epoch(headers.get("last-modified")),
        metadata=metadata,
    )


def receive_answer(bucket: str, key: str, path: Path, response: Any) -> ObjectInfo:
    """Stream the body of a 2xx GET answer (an ``http.client`` response ``ObsWire`` received)
    to ``path`` with ``write_body``; the object as its headers describe it."""
    headers = {name.lower(): value for name, value in response.getheaders()}
    length = headers.get("content-length")
    info = answer_info(key, headers, wire_metadata(headers))
    return write_body(response, info, bucket, path, sized=length is not None)


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
    """The body to a temporary file beside ``path`` (raw ``os`` calls: a small object costs an
    open, a write, a close and a rename, no more), checked, then renamed into place.

    The check is the MD5 the object carries (``md5_of``) or, for a multipart object majob
    uploaded without one (its ``md5-part-size`` and an ETag ``<md5>-<parts>``), that multipart
    ETag, made from the received bytes on the way: no second read of the file. The object
    handed back then says the MD5 of the whole received data as its ``md5`` metadata, as
    majob's own uploads do when they know it."""
    temp, fd = _create_temp(os.fspath(path))
    md5 = hashlib.md5()
    parts = PartDigests.of(info)
    size = 0
    renamed = False
    try:
        try:
            for chunk in _chunks(response):
                md5.update(chunk)
                if parts is not None:
                    parts.update(chunk)
                _write_all(fd, chunk)
                size += len(chunk)
        finally:
            os.close(fd)
        if sized and info.size != size:
            raise http.client.IncompleteRead(b"", info.size - size)
        expected = md5_of(info)
        if expected is not None and expected != md5.hexdigest():
            said = "the ETag" if expected == info.etag else "the md5 the object carries"
            raise _mismatch(bucket, info.key, said)
        metadata = info.metadata
        if parts is not None:
            if parts.etag() != info.etag:
                raise _mismatch(bucket, info.key, "the multipart ETag")
            metadata = {**info.metadata, MD5_METADATA: md5.hexdigest()}
        os.replace(temp, path)
        renamed = True
    finally:
        if not renamed:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp)
    return ObjectInfo(info.key, size, info.etag, info.last_modified, metadata)


def _chunks(response: Any) -> Iterator[memoryview | bytes]:
    """The body in pieces of up to ``READ_CHUNK``: read into one reused buffer when the response
    can (``readinto``: no new 1 MiB object per read), else as ``read`` gives them."""
    readinto = getattr(response, "readinto", None)
    if readinto is None:
        while chunk := response.read(READ_CHUNK):
            yield chunk
        return
    view = memoryview(bytearray(READ_CHUNK))
    while count := readinto(view):
        yield view[:count]


def _mismatch(bucket: str, key: str, said: str) -> StorageIntegrityError:
    return StorageIntegrityError(
        f"download object: the MD5 of the received data does not match {said}",
        bucket=bucket,
        key=key,
    )


class PartDigests:
    """The multipart ETag (``md5(md5(part 1) || ...)-N``) of a stream cut at ``part_size``."""

    def __init__(self, part_size: int) -> None:
        self.part_size = part_size
        self.digests: list[bytes] = []
        self.current = hashlib.md5()
        self.filled = 0

    @classmethod
    def of(cls, info: ObjectInfo) -> PartDigests | None:
        """For an object checked by its multipart ETag: no MD5 said, majob's part size."""
        part_size = part_size_of(info)
        if md5_of(info) is not None or part_size is None or "-" not in info.etag:
            return None
        return cls(part_size)

    def update(self, chunk: memoryview | bytes) -> None:
        view = memoryview(chunk)
        while view:
            take = min(len(view), self.part_size - self.filled)
            self.current.update(view[:take])
            self.filled += take
            view = view[take:]
            if self.filled == self.part_size:
                self.digests.append(self.current.digest())
                self.current, self.filled = hashlib.md5(), 0

    def finished(self) -> list[bytes]:
        """The digest of every part so far, the last one (shorter than a part) included."""
        return self.digests + ([self.current.digest()] if self.filled else [])

    def etag(self) -> str:
        return multipart_etag(self.finished() or [hashlib.md5().digest()])


def multipart_etag(digests: list[bytes]) -> str:
    """The ETag OBS gives a multipart object whose parts have these MD5 ``digests``."""
    return f"{hashlib.md5(b''.join(digests)).hexdigest()}-{len(digests)}"


_TEMP_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)
_temp_numbers = itertools.count()


def _create_temp(target: str) -> tuple[str, int]:
    """A new temporary file beside ``target`` (``.<name>.majob-<pid>-<n>``: unique in this
    process, and beside another process's by its pid), its folder made when missing."""
    folder, name = os.path.split(target)
    while True:
        temp = os.path.join(folder, f".{name[:40]}.majob-{os.getpid()}-{next(_temp_numbers)}")
        try:
            return temp, os.open(temp, _TEMP_FLAGS, 0o666)
        except FileNotFoundError:
            os.makedirs(folder or ".", exist_ok=True)
        except FileExistsError:
            continue  # left by a killed process whose pid this one has now


_TEMP_NAME = re.compile(r"\.(.{1,40})\.majob-([0-9]+)-[0-9]+", re.DOTALL)


def is_abandoned_temp(name: str) -> bool:
    """Whether ``name`` is ``_create_temp``'s and the process that made it is gone (killed
    half-way through a download): a live process's, this one's included, is never named."""
    found = _TEMP_NAME.fullmatch(name)
    if found is None:
        return False
    pid = int(found[2])
    if pid == os.getpid():
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except (PermissionError, OverflowError):
        return False  # alive under another user (or no pid at all): not ours to judge
    return False


def _write_all(fd: int, data: memoryview | bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]

"""``ObsObjectStore``: the ``ObjectStore`` protocol on esdk-obs-python.

The store is built in floors, one purpose each: ``obs_connection`` holds the SDK client and sends
every request through one path (failure mapping in ``obs_failures``, the retry rule of
``storage/retry.py``); ``obs_multipart`` adds the multipart uploads, ``obs_copy`` the server-side
copies; this module the listings, single-request transfers and deletes. ``obs_answers`` reads
what the SDK hands back. Listings ask for ``encoding-type=url``: keys with control characters
cannot travel raw in XML.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, TypeVar

from majob.errors import StorageAuthError, StorageError, StorageNotFound, UserInputError
from majob.storage.base import ListPage, ObjectInfo
from majob.storage.config import Credentials, ObsConfig
from majob.storage.obs_answers import (
    Received,
    epoch,
    metadata_from_headers,
    plain_etag,
    read_list_page,
    receive_answer,
    receive_to_file,
    stream_to_file,
)
from majob.storage.obs_copy import ObsCopy
from majob.storage.obs_failures import malformed
from majob.storage.obs_list_xml import parse_list_page
from majob.storage.obs_wire import ObsWire, WireAnswer, WireResponse
from majob.text import counted

T = TypeVar("T")
_DELETE_BATCH = 1000
BUCKET_OURS = "BucketAlreadyOwnedByYou"
BUCKET_TAKEN = "BucketAlreadyExists"
# XML 1.0's Char production: what a DeleteObjects document can hold at all.
_XML_CHAR = re.compile(r"[\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]*")


def xml_carries(key: str) -> bool:
    """Whether ``key`` reaches OBS intact inside a DeleteObjects XML document.

    Not when it holds a character XML 1.0 does not allow (``\\x01``, ESC, NUL...: the whole
    document is MalformedXML), nor a ``\\r``: the SDK writes it raw, and XML end-of-line
    handling reads it as ``\\n`` (``a\\rb`` would delete ``a\\nb``)."""
    return "\r" not in key and _XML_CHAR.fullmatch(key) is not None


class ObsObjectStore(ObsCopy):
    """``ObjectStore`` on one shared, keep-alive ``ObsClient`` (safe to use from threads); its
    listings and downloads go through ``ObsWire`` (majob's own signed GET) when it speaks the
    configured signature."""

    def __init__(self, config: ObsConfig, credentials: Credentials | None = None) -> None:
        creds = credentials or config.resolved_credentials()
        super().__init__(config, creds)
        self._wire = ObsWire(config, creds) if ObsWire.speaks(config) else None

    # -- listing and metadata ----------------------------------------------------------------

    def list_page(
        self, bucket: str, prefix: str, *, marker: str | None = None, max_keys: int = 1000
    ) -> ListPage:
        if self._wire is not None:
            return self._list_page_wire(self._wire, bucket, prefix, marker, max_keys)
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
            return read_list_page(result.body)
        except (AttributeError, TypeError, ValueError) as error:
            raise malformed(
                "list objects", "a listing", bucket=bucket, key=prefix or None
            ) from error

    def _list_page_wire(
        self, wire: ObsWire, bucket: str, prefix: str, marker: str | None, max_keys: int
    ) -> ListPage:
        query = {"max-keys": str(max_keys), "encoding-type": "url"}  # keys with any character
        if prefix:
            query["prefix"] = prefix
        if marker:
            query["marker"] = marker
        answer = self._call(
            "list objects", bucket, prefix, lambda: wire.get(bucket, "", query, _read_all)
        )
        try:
            assert isinstance(answer, WireAnswer)
            return parse_list_page(answer.value)
        except (AssertionError, ValueError) as error:
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
                etag=plain_etag(body.etag),
                last_modified=epoch(body.lastModified),
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
        etag = self._read("upload file", bucket, key, result, lambda body: plain_etag(body.etag))
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
        etag = self._read("upload object", bucket, key, result, lambda body: plain_etag(body.etag))
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
        against the one the object carries (its ETag, or majob's ``md5`` metadata) on the way.
        The answer is read by ``receive_answer`` (``ObsWire``) or ``receive_to_file``, not by the
        SDK's ``getObject``."""
        wire = self._wire
        if wire is not None:
            read = functools.partial(receive_answer, bucket, key, path)
            answer = self._call(
                "download object", bucket, key, lambda: wire.get(bucket, key, {}, read)
            )
            if not isinstance(answer, WireAnswer):
                raise malformed("download object", "an answer", bucket=bucket, key=key)
            info: ObjectInfo = answer.value
            return info
        if not hasattr(self._client, "getObjectInto"):  # pragma: no cover - another SDK version
            return self._get_file_sdk(bucket, key, path)
        receive = functools.partial(
            receive_to_file, self._client, self._sdk.util, bucket, key, path
        )
        result = self._call(
            "download object",
            bucket,
            key,
            lambda: self._client.getObjectInto(bucket, key, receive),
        )
        if not isinstance(result, Received):
            raise malformed("download object", "an answer", bucket=bucket, key=key)
        return result.info

    @property
    def ranged(self) -> bool:
        """Whether ``get_range`` can be used (majob's own GETs: the V4 signature)."""
        return self._wire is not None

    def get_range(
        self, bucket: str, key: str, span: tuple[int, int], etag: str, read: Callable[[Any], T]
    ) -> T:
        """``GET`` the bytes ``[start, stop)`` (``span``) of ``key`` while its ETag is still
        ``etag`` (``If-Match``: a ``StorageError`` with status 412 once it changed); ``read``
        gets the answer (a ``WireResponse``) and reads its body. Retried as every request."""
        wire = self._wire
        if wire is None:
            raise NotImplementedError("ranged GETs need the V4 signature (store.ranged)")
        start, stop = span
        headers = {"Range": f"bytes={start}-{stop - 1}", "If-Match": f'"{etag}"'}
        answer = self._call(
            "download object", bucket, key, lambda: wire.get(bucket, key, {}, read, headers)
        )
        if not isinstance(answer, WireAnswer):
            raise malformed("download object", "an answer", bucket=bucket, key=key)
        value: T = answer.value
        return value

    def _get_file_sdk(self, bucket: str, key: str, path: Path) -> ObjectInfo:
        info: list[ObjectInfo] = []

        def download() -> Any:
            result = self._client.getObject(bucket, key)
            if int(getattr(result, "status", 0) or 0) >= 300:
                return result
            info.clear()
            info.append(stream_to_file(result, bucket, key, path))
            return result

        self._call("download object", bucket, key, download)
        return info[0]

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

    # -- buckets -----------------------------------------------------------------------------

    def create_bucket(self, bucket: str) -> bool:
        # OBS answers 200 to its owner creating a bucket again in the same region (the SDK
        # guide; S3 and the fake OBS answer 409 BucketAlreadyOwnedByYou): asked first, a bucket
        # that is ours already is never reported as made.
        if self._bucket_is_ours(bucket):
            return False
        # OBS creates a bucket in the region of the endpoint it is asked at; the location says
        # which region that is (the SDK sends none when the config names no region).
        region = self.config.region or None
        try:
            self._call(
                "create bucket",
                bucket,
                None,
                lambda: self._client.createBucket(bucket, location=region),
            )
        except StorageError as error:
            if error.code == BUCKET_OURS:
                return False
            if error.code == BUCKET_TAKEN:
                raise StorageError(
                    f"bucket {bucket!r} belongs to another account (bucket names are global)",
                    code=error.code,
                    hint="choose another bucket name",
                ) from None
            raise
        return True

    def _bucket_is_ours(self, bucket: str) -> bool:
        """Whether ``bucket`` exists and these keys may use it (403: another account's, or no
        right to it; the create then says which)."""
        try:
            self._call("head bucket", bucket, None, lambda: self._client.headBucket(bucket))
        except (StorageNotFound, StorageAuthError):
            return False
        return True

    def __enter__(self) -> ObsObjectStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        if self._wire is not None:
            self._wire.close()
        super().close()


def _read_all(response: WireResponse) -> bytes:
    return response.read()


def open_store(config: ObsConfig | None = None) -> ObsObjectStore:
    """The store the CLI and sync use: ``config`` or the ``MAJOB_OBS_*`` environment."""
    return ObsObjectStore(config or ObsConfig.from_env())

"""The same end-to-end checks, passed by every real client against the fake OBS.

The fake is the judge of what was stored (its backend is read directly), the client is the
judge of what comes back: so a fake that only agreed with itself would fail here.
"""

from __future__ import annotations

import email.utils
import hashlib
import http.client
import os
import re
import time
import urllib.parse
from pathlib import Path
from typing import Any

import pytest

from majob.emulator.obs import DEFAULT_SECRET_KEY, FakeObsServer
from majob.emulator.obs.models import Blob
from majob.testing import FAKE_BUCKET

from .conftest import ClientFailed, make_client

KEY = "runs/ü b+c/data.bin"  # UTF-8, a space and a plus: the encodings clients disagree on


def stored(server: FakeObsServer, key: str) -> bytes:
    obj = server.backend.get_object(FAKE_BUCKET, key)
    return b"".join(obj.blob.read_range(0, obj.size))


def test_put_then_get_round_trips_bytes(
    client: Any, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "in.bin"
    source.write_bytes(os.urandom(20_000))

    client.put(FAKE_BUCKET, KEY, source, {})
    client.get(FAKE_BUCKET, KEY, tmp_path / "out.bin")

    assert stored(fake_obs_server, KEY) == source.read_bytes()
    assert (tmp_path / "out.bin").read_bytes() == source.read_bytes()
    etag = fake_obs_server.backend.get_object(FAKE_BUCKET, KEY).etag
    assert etag == hashlib.md5(source.read_bytes()).hexdigest()
    families = {e.family for e in fake_obs_server.log.entries() if e.path.endswith("data.bin")}
    assert families == {client.family}


def test_listing_pages_through_prefix(client: Any, fake_obs_server: FakeObsServer) -> None:
    # 1,050 keys need two pages of 1,000; the neighbours outside the prefix must not show.
    wanted = [f"many/{i:04d}.txt" for i in range(1050)]
    for key in [*wanted, "many-not/x.txt", "man/y.txt"]:
        fake_obs_server.backend.put_object(
            FAKE_BUCKET, key, Blob(1, hashlib.md5(b"x").digest(), data=b"x")
        )

    assert sorted(client.list(FAKE_BUCKET, "many/")) == wanted
    lists = [
        e
        for e in fake_obs_server.log.entries()
        if e.method == "GET" and e.path.rstrip("/") == f"/{FAKE_BUCKET}"
    ]
    assert len(lists) >= 2


def test_range_get_returns_exactly_the_range(
    client: Any, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    data = os.urandom(10_000)
    fake_obs_server.backend.put_object(
        FAKE_BUCKET, KEY, Blob(len(data), hashlib.md5(data).digest(), data=data)
    )

    assert client.get_range(FAKE_BUCKET, KEY, 100, 4099) == data[100:4100]
    assert any(e.status == 206 for e in fake_obs_server.log.entries())


def test_large_file_goes_up_in_parts(
    client: Any, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "big.bin"
    source.write_bytes(os.urandom(client.multipart_size + 12_345))

    client.put(FAKE_BUCKET, "big/file.bin", source, {})

    assert stored(fake_obs_server, "big/file.bin") == source.read_bytes()
    obj = fake_obs_server.backend.get_object(FAKE_BUCKET, "big/file.bin")
    assert re.fullmatch(r"[0-9a-f]{32}-[2-9]", obj.etag)
    log = fake_obs_server.log.entries()
    assert any(e.method == "POST" and re.match(r"uploads=?(&|$)", e.query) for e in log)
    assert not fake_obs_server.backend.list_uploads(FAKE_BUCKET)
    client.get(FAKE_BUCKET, "big/file.bin", tmp_path / "back.bin")
    assert (tmp_path / "back.bin").read_bytes() == source.read_bytes()


def test_delete_removes_the_object(
    client: Any, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "f.txt"
    source.write_bytes(b"bye")
    client.put(FAKE_BUCKET, "gone/f.txt", source, {})
    client.put(FAKE_BUCKET, "gone/stay.txt", source, {})

    client.delete(FAKE_BUCKET, "gone/f.txt")

    assert client.list(FAKE_BUCKET, "gone/") == ["gone/stay.txt"]


def test_custom_metadata_round_trips(
    client: Any, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "m.txt"
    source.write_bytes(b"meta")

    client.put(FAKE_BUCKET, "meta/m.txt", source, {"majob-md5": "0123abcd", "majob-run": "42"})

    kept = fake_obs_server.backend.get_object(FAKE_BUCKET, "meta/m.txt").metadata
    # rclone -M adds its own (mtime, mode...): only ours are compared.
    assert {name: value for name, value in kept.items() if name.startswith("majob-")} == {
        "majob-md5": "0123abcd",
        "majob-run": "42",
    }
    assert client.metadata(FAKE_BUCKET, "meta/m.txt") == {
        "majob-md5": "0123abcd",
        "majob-run": "42",
    }


def test_wrong_secret_key_is_refused_and_nothing_stored(
    client_name: str, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "f.txt"
    source.write_bytes(b"secret")
    wrong = make_client(client_name, fake_obs_server.endpoint, DEFAULT_SECRET_KEY[::-1], tmp_path)
    try:
        # rclone HEADs first: a HEAD error has no body, so it only reports "403 Forbidden".
        with pytest.raises(ClientFailed, match=r"SignatureDoesNotMatch|403"):
            wrong.put(FAKE_BUCKET, "nope.txt", source, {})
    finally:
        wrong.close()

    assert not fake_obs_server.backend.buckets[FAKE_BUCKET].objects
    refused = [e for e in fake_obs_server.log.entries() if e.method != "HEAD" or e.status != 200]
    assert refused
    assert {(e.status, e.error) for e in refused} == {(403, "SignatureDoesNotMatch")}


def _fetch(url: str, method: str = "GET", data: bytes | None = None) -> tuple[int, bytes]:
    """Send a presigned URL as a browser or curl would (no Content-Type of its own)."""
    parts = urllib.parse.urlsplit(url)
    connection = http.client.HTTPConnection(parts.netloc, timeout=30)
    try:
        connection.request(method, f"{parts.path}?{parts.query}", body=data)
        response = connection.getresponse()
        return response.status, response.read()
    finally:
        connection.close()


@pytest.mark.parametrize("signature", ["v2", "v4"])
def test_boto3_presigned_urls_work_and_are_checked(
    fake_obs_server: FakeObsServer, tmp_path: Path, signature: str
) -> None:
    data = os.urandom(5000)
    client = make_client(
        f"boto3-{signature}", fake_obs_server.endpoint, DEFAULT_SECRET_KEY, tmp_path
    )
    try:
        params = {"Bucket": FAKE_BUCKET, "Key": KEY}
        put_url = client.client.generate_presigned_url("put_object", Params=params, ExpiresIn=300)
        assert _fetch(put_url, "PUT", data)[0] == 200
        get_url = client.client.generate_presigned_url("get_object", Params=params, ExpiresIn=300)
        assert _fetch(get_url) == (200, data)
        forged = re.sub(r"(Signature=)([^&]{4})", r"\g<1>AAAA", get_url)
        status, body = _fetch(forged)
        assert status == 403 and b"SignatureDoesNotMatch" in body
    finally:
        client.close()
    assert stored(fake_obs_server, KEY) == data


@pytest.mark.parametrize("mode", ["v2", "v4", "obs"])
def test_sdk_signed_urls_work_and_expire(
    fake_obs_server: FakeObsServer, tmp_path: Path, mode: str
) -> None:
    data = os.urandom(3000)
    fake_obs_server.backend.put_object(FAKE_BUCKET, KEY, Blob.of(data))
    client = make_client(f"sdk-{mode}", fake_obs_server.endpoint, DEFAULT_SECRET_KEY, tmp_path)
    try:
        url = client.client.createSignedUrl("GET", FAKE_BUCKET, KEY, expires=300).signedUrl
        assert _fetch(url) == (200, data)
        if mode == "v4":
            # An X-Amz-Date an hour ago with 300 s to live.
            old = email.utils.formatdate(time.time() - 3600, usegmt=True)
            signed = client.client.createSignedUrl(
                "GET", FAKE_BUCKET, KEY, expires=300, headers={"Date": old}
            )
            expired = signed.signedUrl
        else:
            expired = client.client.createSignedUrl("GET", FAKE_BUCKET, KEY, expires=-60).signedUrl
        status, body = _fetch(expired)
        assert status == 403 and b"Request has expired" in body
    finally:
        client.close()


def test_boto3_conditional_get_copy_and_headers(
    fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    from botocore.exceptions import ClientError

    client = make_client("boto3-v4", fake_obs_server.endpoint, DEFAULT_SECRET_KEY, tmp_path).client
    try:
        put = client.put_object(
            Bucket=FAKE_BUCKET,
            Key="h/one.txt",
            Body=b"headers",
            ContentDisposition="attachment",
            CacheControl="no-cache",
            ContentLanguage="fr",
            StorageClass="STANDARD_IA",
            Metadata={"majob-run": "1"},
        )
        head = client.head_object(Bucket=FAKE_BUCKET, Key="h/one.txt")
        assert (head["ContentDisposition"], head["CacheControl"]) == ("attachment", "no-cache")
        assert (head["ContentLanguage"], head["StorageClass"]) == ("fr", "STANDARD_IA")
        with pytest.raises(ClientError, match=r"304|Not Modified"):
            client.get_object(Bucket=FAKE_BUCKET, Key="h/one.txt", IfNoneMatch=put["ETag"])
        with pytest.raises(ClientError, match="PreconditionFailed"):
            client.get_object(Bucket=FAKE_BUCKET, Key="h/one.txt", IfMatch='"0"')
        client.copy_object(
            Bucket=FAKE_BUCKET, Key="h/two.txt", CopySource=f"{FAKE_BUCKET}/h/one.txt"
        )
        copy = client.get_object(Bucket=FAKE_BUCKET, Key="h/two.txt")
        assert (copy["Body"].read(), copy["Metadata"]) == (b"headers", {"majob-run": "1"})
        # DeleteObjects: botocore sends a CRC32 of the document, which the fake checks.
        keys = [{"Key": "h/one.txt"}, {"Key": "h/two.txt"}]
        client.delete_objects(Bucket=FAKE_BUCKET, Delete={"Objects": keys})
        assert "Contents" not in client.list_objects_v2(Bucket=FAKE_BUCKET, Prefix="h/")
    finally:
        client.close()

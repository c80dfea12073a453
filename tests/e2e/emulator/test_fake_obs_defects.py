"""The fake OBS answers the requests issue 13 found it answering wrongly, the way OBS and S3
answer them (one test per defect; each failed before its fix)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import os
import socket
import threading
import time
import zlib
from collections.abc import Iterator
from email.utils import formatdate
from pathlib import Path

import crc32c
import pytest

from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer, fake_obs
from majob.emulator.obs.auth import SignedRequest, v2_signature
from majob.emulator.obs.models import Blob

from .test_fake_obs_http import Reply, call, error_code, put, xml_texts


@pytest.fixture
def open_fake() -> Iterator[FakeObsServer]:
    with fake_obs(credentials={}, buckets=("bkt",), request_timeout=0.5) as server:
        yield server


def raw_exchange(server: FakeObsServer, request: bytes) -> bytes:
    """Send ``request`` as bytes and read until the server closes or 10 s pass."""
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while b"\r\n\r\n" not in received or not received.endswith(b">"):
            chunk = sock.recv(65536)
            if not chunk:
                break
            received += chunk
        return received


def b64(digest: bytes) -> str:
    return base64.b64encode(digest).decode("ascii")


# -- torn reads ------------------------------------------------------------------------------


class SlowReader(threading.Thread):
    """GETs ``path``, reads the first 64 KiB, signals ``started``, then waits for ``resume``
    before reading the rest: the object is changed in between, under the open response."""

    def __init__(self, server: FakeObsServer, path: str) -> None:
        super().__init__(daemon=True)
        self.server, self.path = server, path
        self.started, self.resume = threading.Event(), threading.Event()
        self.status = 0
        self.length = -1
        self.data = b""
        self.error: BaseException | None = None

    def run(self) -> None:
        connection = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=30)
        try:
            connection.connect()
            assert connection.sock is not None
            connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 65536)
            connection.request("GET", self.path)
            response = connection.getresponse()
            self.status, self.length = response.status, int(response.headers["Content-Length"])
            self.data = response.read(64 * 1024)
            self.started.set()
            assert self.resume.wait(30)
            self.data += response.read()
        except BaseException as error:  # reported by the test
            self.error = error
            self.started.set()
        finally:
            connection.close()


def _multipart_object(server: FakeObsServer, key: str, parts: int, size: int) -> bytes:
    backend = server.backend
    upload = backend.create_upload("bkt", key)
    chunks = [os.urandom(size) for _ in range(parts)]
    listed = []
    for number, chunk in enumerate(chunks, start=1):
        writer = backend.new_writer()
        writer.write(chunk)
        part = backend.put_part("bkt", key, upload.upload_id, number, writer.finish())
        listed.append((number, part.etag))
    backend.complete_upload("bkt", key, upload.upload_id, listed)
    return b"".join(chunks)


@pytest.mark.parametrize("change", ["delete", "overwrite"])
def test_a_get_serves_the_version_it_started_with_whole(tmp_path: Path, change: str) -> None:
    with fake_obs(credentials={}, buckets=("bkt",), data_dir=tmp_path) as server:
        data = _multipart_object(server, "big.bin", parts=12, size=2 * 1024 * 1024)
        reader = SlowReader(server, "/bkt/big.bin")
        reader.start()
        assert reader.started.wait(30)
        if change == "delete":
            server.backend.delete_object("bkt", "big.bin")
        else:
            put(server, "big.bin", os.urandom(300_000))
        reader.resume.set()
        reader.join(60)

        assert reader.error is None
        assert (reader.status, reader.length) == (200, len(data))
        assert hashlib.md5(reader.data).digest() == hashlib.md5(data).digest()
        # The old version's files go once the reader let go.
        blobs = {p.name for p in (tmp_path / "blobs").iterdir()}
        assert len(blobs) == (0 if change == "delete" else 1)


def test_a_pinned_single_file_outlives_its_overwrite(tmp_path: Path) -> None:
    with fake_obs(credentials={}, buckets=("bkt",), data_dir=tmp_path) as server:
        data = os.urandom(200_000)
        put(server, "one.bin", data)
        obj, body = server.backend.open_object("bkt", "one.bin", lambda o: (0, o.size))
        put(server, "one.bin", b"new")
        assert b"".join(body) == data and obj.size == len(data)


# -- V2 signatures on bucket-level requests --------------------------------------------------


@pytest.mark.parametrize("signed", ["/bkt/", "/bkt"])
def test_v2_bucket_requests_accept_the_resource_with_or_without_slash(signed: str) -> None:
    with fake_obs(buckets=("bkt",)) as server:
        date = formatdate(usegmt=True)
        request = SignedRequest("GET", signed, [], {"date": date})
        signature = v2_signature(request, DEFAULT_SECRET_KEY, prefix="x-amz-", resource=signed)
        headers = {"Date": date, "Authorization": f"AWS {DEFAULT_ACCESS_KEY}:{signature}"}
        status, _, body = call(server, "GET", "/bkt", headers=headers)
        assert status == 200, body


# -- DeleteObjects ---------------------------------------------------------------------------


def test_delete_objects_with_an_invalid_entry_deletes_nothing(open_fake: FakeObsServer) -> None:
    put(open_fake, "a.txt")
    put(open_fake, "b.txt")
    body = (
        b"<Delete><Object><Key>a.txt</Key></Object><Object><Key></Key></Object>"
        b"<Object><Key>b.txt</Key></Object></Delete>"
    )
    headers = {"Content-MD5": b64(hashlib.md5(body).digest())}
    status, _, answer = call(open_fake, "POST", "/bkt?delete", body, headers)
    assert (status, error_code(answer)) == (400, "MalformedXML")
    assert sorted(open_fake.backend.bucket("bkt").objects) == ["a.txt", "b.txt"]


def test_delete_objects_checks_the_checksum_of_its_document(open_fake: FakeObsServer) -> None:
    put(open_fake, "a.txt")
    body = b"<Delete><Object><Key>a.txt</Key></Object></Delete>"
    wrong = {"x-amz-checksum-crc32": b64(zlib.crc32(b"other").to_bytes(4, "big"))}
    status, _, answer = call(open_fake, "POST", "/bkt?delete", body, wrong)
    assert (status, error_code(answer)) == (400, "BadDigest")
    assert "a.txt" in open_fake.backend.bucket("bkt").objects


def test_delete_objects_refuses_entity_expansion(open_fake: FakeObsServer) -> None:
    body = b'<!DOCTYPE d [<!ENTITY x "a.txt">]><Delete><Object><Key>&x;</Key></Object></Delete>'
    status, _, answer = call(open_fake, "POST", "/bkt?delete", body)
    assert (status, error_code(answer)) == (400, "MalformedXML")


# -- the fault control plane -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("rule", "reason"),
    [
        ({"status": 503, "count": "1"}, "count"),
        ({"status": 503, "path": "("}, "not a regular expression"),
        ({"status": "oops"}, "status"),
        ({"status": 503, "probability": 2}, "probability"),
        ({"method": "GET"}, "needs a status"),
        ({"status": 503, "colour": "red"}, "colour"),
    ],
)
def test_fault_rules_are_validated(
    open_fake: FakeObsServer, rule: dict[str, object], reason: str
) -> None:
    status, _, body = call(open_fake, "POST", "/_majob/faults", json.dumps(rule).encode())
    assert status == 400
    assert reason in json.loads(body)["error"]
    assert open_fake.faults.rules == []
    assert call(open_fake, "GET", "/bkt")[0] == 200


# -- checksums -------------------------------------------------------------------------------

DATA = b"the checksummed body"
GOOD = {
    "crc32": b64(zlib.crc32(DATA).to_bytes(4, "big")),
    "crc32c": b64(crc32c.crc32c(DATA).to_bytes(4, "big")),
    "sha1": b64(hashlib.sha1(DATA).digest()),
    "sha256": b64(hashlib.sha256(DATA).digest()),
}


@pytest.mark.parametrize("algorithm", sorted(GOOD))
def test_checksum_headers_are_checked(open_fake: FakeObsServer, algorithm: str) -> None:
    header = f"x-amz-checksum-{algorithm}"
    put(open_fake, "good", DATA, **{header: GOOD[algorithm]})
    other = GOOD["sha256"] if algorithm != "sha256" else GOOD["sha1"]
    wrong = b64(bytes(len(base64.b64decode(GOOD[algorithm]))))

    status, _, body = call(open_fake, "PUT", "/bkt/bad", DATA, {header: wrong})
    assert (status, error_code(body)) == (400, "BadDigest")
    status, _, body = call(open_fake, "PUT", "/bkt/bad", DATA, {header: other})
    assert (status, error_code(body)) == (400, "InvalidRequest")
    assert list(open_fake.backend.bucket("bkt").objects) == ["good"]


def test_checksum_companions_and_crc64nvme_are_not_refused(open_fake: FakeObsServer) -> None:
    put(
        open_fake,
        "a",
        DATA,
        **{"x-amz-checksum-crc64nvme": "AAAAAAAAAAA=", "x-amz-checksum-type": "FULL_OBJECT"},
    )
    status, _, body = call(
        open_fake,
        "PUT",
        "/bkt/b",
        DATA,
        {"x-amz-checksum-crc32": GOOD["crc32"], "x-amz-checksum-sha1": GOOD["sha1"]},
    )
    assert (status, error_code(body)) == (400, "InvalidRequest")  # two checksums


def test_crc32c_matches_the_reference_vector() -> None:
    from majob.emulator.obs.checksums import ALGORITHMS

    digest = ALGORITHMS["crc32c"][0]()
    digest.update(b"123456789")
    assert digest.digest().hex() == "e3069283"  # the CRC-32C check value


def _aws_chunked(data: bytes, trailer: str) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n0\r\n" + trailer.encode() + b"\r\n\r\n"


@pytest.mark.parametrize(("value", "status"), [(GOOD["crc32"], 200), ("AAAAAA==", 400)])
def test_checksum_trailers_are_checked(open_fake: FakeObsServer, value: str, status: int) -> None:
    headers = {
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "Content-Encoding": "aws-chunked",
        "x-amz-trailer": "x-amz-checksum-crc32",
        "x-amz-decoded-content-length": str(len(DATA)),
    }
    body = _aws_chunked(DATA, f"x-amz-checksum-crc32:{value}")
    got, _, answer = call(open_fake, "PUT", "/bkt/t", body, headers)
    assert got == status, answer
    if status == 200:
        assert open_fake.backend.get_object("bkt", "t").blob.data == DATA
    else:
        assert error_code(answer) == "BadDigest"


# -- conditional requests, stored headers, storage class -------------------------------------


def test_conditional_gets(open_fake: FakeObsServer) -> None:
    put(open_fake, "c.txt", b"cond")
    etag = f'"{hashlib.md5(b"cond").hexdigest()}"'
    past, future = formatdate(time.time() - 3600, usegmt=True), formatdate(usegmt=True)

    def status(**headers: str) -> int:
        return call(open_fake, "GET", "/bkt/c.txt", headers=headers)[0]

    assert status(**{"If-Match": etag}) == 200
    assert status(**{"If-Match": '"other"'}) == 412
    assert status(**{"If-None-Match": etag}) == 304
    assert status(**{"If-None-Match": '"other"'}) == 200
    assert status(**{"If-Modified-Since": future}) == 304
    assert status(**{"If-Modified-Since": past}) == 200
    assert status(**{"If-Unmodified-Since": past}) == 412
    assert status(**{"If-Match": etag, "If-Unmodified-Since": past}) == 200  # as S3
    assert call(open_fake, "HEAD", "/bkt/c.txt", headers={"If-None-Match": etag})[0] == 304


def test_put_if_none_match_star_does_not_overwrite(open_fake: FakeObsServer) -> None:
    put(open_fake, "once.txt", b"first", **{"If-None-Match": "*"})
    status, _, body = call(open_fake, "PUT", "/bkt/once.txt", b"second", {"If-None-Match": "*"})
    assert (status, error_code(body)) == (412, "PreconditionFailed")
    assert open_fake.backend.get_object("bkt", "once.txt").blob.data == b"first"


def test_representation_headers_and_storage_class_are_kept(open_fake: FakeObsServer) -> None:
    sent = {
        "Cache-Control": "max-age=60",
        "Content-Disposition": 'attachment; filename="r.csv"',
        "Content-Encoding": "gzip",
        "Content-Language": "de",
        "Expires": "Thu, 01 Dec 2033 16:00:00 GMT",
    }
    put(open_fake, "r.csv", b"x", **sent, **{"x-amz-storage-class": "STANDARD_IA"})
    for method in ("GET", "HEAD"):
        _, headers, _ = call(open_fake, method, "/bkt/r.csv")
        assert {name: headers[name.lower()] for name in sent} == sent
        assert headers["x-amz-storage-class"] == "STANDARD_IA"
    _, _, listing = call(open_fake, "GET", "/bkt")
    assert xml_texts(listing, "StorageClass") == ["STANDARD_IA"]
    status, _, body = call(open_fake, "PUT", "/bkt/s", b"x", {"x-amz-storage-class": "FAST"})
    assert (status, error_code(body)) == (400, "InvalidStorageClass")


# -- CopyObject and UploadPartCopy -----------------------------------------------------------


def test_copy_object_copies_bytes_and_metadata(open_fake: FakeObsServer) -> None:
    put(open_fake, "src ü.txt", b"copied", **{"x-amz-meta-run": "7", "Content-Type": "text/x"})
    status, _, body = call(
        open_fake, "PUT", "/bkt/dst.txt", b"", {"x-amz-copy-source": "/bkt/src%20%C3%BC.txt"}
    )
    assert status == 200 and xml_texts(body, "ETag") == [f'"{hashlib.md5(b"copied").hexdigest()}"']
    copy = open_fake.backend.get_object("bkt", "dst.txt")
    assert (copy.blob.data, copy.metadata, copy.content_type) == (b"copied", {"run": "7"}, "text/x")

    headers = {
        "x-obs-copy-source": "/bkt/dst.txt",
        "x-obs-metadata-directive": "REPLACE",
        "x-obs-meta-run": "8",
    }
    assert call(open_fake, "PUT", "/bkt/dst.txt", b"", headers)[0] == 200
    assert open_fake.backend.get_object("bkt", "dst.txt").metadata == {"run": "8"}
    status, _, body = call(
        open_fake, "PUT", "/bkt/dst.txt", b"", {"x-amz-copy-source": "bkt/dst.txt"}
    )
    assert (status, error_code(body)) == (400, "InvalidRequest")  # onto itself, unchanged
    status, _, body = call(open_fake, "PUT", "/bkt/x", b"", {"x-amz-copy-source": "/bkt/none"})
    assert (status, error_code(body)) == (404, "NoSuchKey")
    headers = {"x-amz-copy-source": "/bkt/dst.txt", "x-amz-copy-source-if-match": '"0"'}
    status, _, body = call(open_fake, "PUT", "/bkt/y", b"", headers)
    assert (status, error_code(body)) == (412, "PreconditionFailed")
    assert "y" not in open_fake.backend.bucket("bkt").objects


def test_upload_part_copy_takes_a_range(open_fake: FakeObsServer) -> None:
    data = os.urandom(300_000)
    open_fake.backend.put_object("bkt", "src.bin", Blob.of(data))
    upload = open_fake.backend.create_upload("bkt", "joined.bin")
    query = f"uploadId={upload.upload_id}"
    headers = {"x-amz-copy-source": "/bkt/src.bin", "x-amz-copy-source-range": "bytes=0-199999"}
    status, _, body = call(open_fake, "PUT", f"/bkt/joined.bin?partNumber=1&{query}", b"", headers)
    assert status == 200, body
    headers["x-amz-copy-source-range"] = "bytes=200000-299999"
    status, _, body = call(open_fake, "PUT", f"/bkt/joined.bin?partNumber=2&{query}", b"", headers)
    assert status == 200, body
    parts = open_fake.backend.list_parts("bkt", "joined.bin", upload.upload_id)
    open_fake.backend.complete_upload(
        "bkt", "joined.bin", upload.upload_id, [(p.number, p.etag) for p in parts]
    )
    obj = open_fake.backend.get_object("bkt", "joined.bin")
    assert b"".join(obj.blob.read_range(0, obj.size)) == data


# -- bad requests ----------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["PUT", "GET"])
@pytest.mark.parametrize("length", ["abc", "-5"])
def test_a_bad_content_length_is_a_400(open_fake: FakeObsServer, method: str, length: str) -> None:
    put(open_fake, "k")
    answer = raw_exchange(
        open_fake,
        f"{method} /bkt/k HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n".encode(),
    )
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert b"<Code>InvalidArgument</Code>" in answer
    assert open_fake.backend.get_object("bkt", "k").blob.data == b"x"


def test_a_client_that_stalls_mid_body_gets_request_timeout(open_fake: FakeObsServer) -> None:
    answer = raw_exchange(
        open_fake, b"PUT /bkt/slow HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\nonly part"
    )
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:200]
    assert b"<Code>RequestTimeout</Code>" in answer
    assert "slow" not in open_fake.backend.bucket("bkt").objects


def test_a_key_that_is_not_utf8_is_refused(open_fake: FakeObsServer) -> None:
    status, _, body = call(open_fake, "PUT", "/bkt/bad%FFkey", b"x")
    assert (status, error_code(body)) == (400, "InvalidURI")
    assert not open_fake.backend.bucket("bkt").objects


def test_list_v2_with_max_keys_zero_is_not_truncated(open_fake: FakeObsServer) -> None:
    put(open_fake, "k")
    _, _, body = call(open_fake, "GET", "/bkt?list-type=2&max-keys=0")
    assert xml_texts(body, "IsTruncated") == ["false"]
    assert xml_texts(body, "NextContinuationToken") == []
    assert xml_texts(body, "KeyCount") == ["0"]


def _complete(server: FakeObsServer, upload_id: str, etag: str) -> Reply:
    body = f"<CompleteMultipartUpload><Part><PartNumber>1</PartNumber><ETag>{etag}</ETag></Part></CompleteMultipartUpload>"
    return call(server, "POST", f"/bkt/m.bin?uploadId={upload_id}", body.encode())


def test_completing_twice_answers_200_again(open_fake: FakeObsServer) -> None:
    upload = open_fake.backend.create_upload("bkt", "m.bin")
    part = open_fake.backend.put_part("bkt", "m.bin", upload.upload_id, 1, Blob.of(b"part"))
    first = _complete(open_fake, upload.upload_id, part.etag)
    again = _complete(open_fake, upload.upload_id, part.etag)
    assert (first[0], again[0]) == (200, 200)
    assert xml_texts(first[2], "ETag") == xml_texts(again[2], "ETag")
    assert _complete(open_fake, upload.upload_id, '"' + "0" * 32 + '"')[0] == 404  # other parts
    put(open_fake, "m.bin", b"replaced")
    assert _complete(open_fake, upload.upload_id, part.etag)[0] == 404


# -- listings with control characters, escaped XML -------------------------------------------


def test_listing_escapes_control_characters(open_fake: FakeObsServer) -> None:
    open_fake.backend.put_object("bkt", "ctl/a\x01b\rc", Blob.of(b"x"))
    _, _, body = call(open_fake, "GET", "/bkt?prefix=ctl/")
    assert b"\x01" not in body and b"\r" not in body
    assert b"<Key>ctl/a&#1;b&#13;c</Key>" in body
    _, _, encoded = call(open_fake, "GET", "/bkt?prefix=ctl/&encoding-type=url")
    assert xml_texts(encoded, "Key") == ["ctl/a%01b%0Dc"]
    assert xml_texts(encoded, "EncodingType") == ["url"]


def test_location_constraint_is_escaped(open_fake: FakeObsServer) -> None:
    body = b"<CreateBucketConfiguration><LocationConstraint>a&amp;b&lt;</LocationConstraint></CreateBucketConfiguration>"
    assert call(open_fake, "PUT", "/odd-bucket", body)[0] == 200
    _, _, location = call(open_fake, "GET", "/odd-bucket?location")
    assert xml_texts(location, "LocationConstraint") == ["a&b<"]

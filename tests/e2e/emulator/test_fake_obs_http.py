"""The fake OBS at the HTTP level: what raw requests get back (signatures off, except where a
test is about them)."""

from __future__ import annotations

import base64
import hashlib
import http.client
import json
import re
import socket
import struct
from collections.abc import Iterator
from urllib.parse import quote
from xml.etree import ElementTree

import pytest

from majob.emulator.obs import FakeObsServer, fake_obs
from majob.testing import wait_until

Reply = tuple[int, dict[str, str], bytes]


@pytest.fixture
def open_fake() -> Iterator[FakeObsServer]:
    with fake_obs(credentials={}, buckets=("bkt",)) as server:
        yield server


def call(
    server: FakeObsServer,
    method: str,
    path: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Reply:
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request(method, path, body=body, headers=headers or {})
        response = connection.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data
    finally:
        connection.close()


def xml_texts(body: bytes, tag: str) -> list[str]:
    root = ElementTree.fromstring(body)
    return [node.text or "" for node in root.iter() if node.tag.rsplit("}", 1)[-1] == tag]


def error_code(body: bytes) -> str:
    return xml_texts(body, "Code")[0]


def put(server: FakeObsServer, key: str, data: bytes = b"x", **headers: str) -> None:
    status, _, body = call(server, "PUT", f"/bkt/{quote(key)}", data, headers)
    assert status == 200, body


def test_answers_in_the_header_family_of_the_request(open_fake: FakeObsServer) -> None:
    put(open_fake, "obs.txt", b"o", **{"x-obs-meta-color": "red"})
    put(open_fake, "amz.txt", b"a", **{"x-amz-meta-color": "blue"})

    _, obs_headers, _ = call(open_fake, "HEAD", "/bkt/obs.txt", headers={"x-obs-date": "now"})
    _, amz_headers, _ = call(open_fake, "HEAD", "/bkt/amz.txt")

    assert obs_headers["x-obs-meta-color"] == "red" and "x-obs-request-id" in obs_headers
    assert not any(name.startswith("x-amz-") for name in obs_headers)
    assert amz_headers["x-amz-meta-color"] == "blue" and "x-amz-request-id" in amz_headers
    assert [e.family for e in open_fake.log.entries()] == ["obs", "amz", "obs", "amz"]


def test_signature_negotiation_probe_needs_no_signature() -> None:
    with fake_obs(buckets=("bkt",)) as server:  # signatures on
        status, headers, _ = call(server, "HEAD", "/bkt?apiversion")
        assert (status, headers["x-obs-api"]) == (200, "3.0")
        status, _, body = call(server, "GET", "/bkt")
        assert (status, error_code(body)) == (403, "AccessDenied")


def test_list_objects_v2_pages_with_tokens_and_url_encoding(open_fake: FakeObsServer) -> None:
    for key in ["d/a b", "d/ü", "d/z", "e"]:
        put(open_fake, key)

    status, _, first = call(
        open_fake, "GET", "/bkt?list-type=2&prefix=d%2F&max-keys=2&encoding-type=url"
    )
    assert status == 200
    assert xml_texts(first, "Key") == ["d/a%20b", "d/z"]  # UTF-8 byte order: z < ü
    assert xml_texts(first, "KeyCount") == ["2"] and xml_texts(first, "IsTruncated") == ["true"]
    [token] = xml_texts(first, "NextContinuationToken")
    _, _, second = call(
        open_fake, "GET", f"/bkt?list-type=2&prefix=d%2F&continuation-token={quote(token)}"
    )
    assert xml_texts(second, "Key") == ["d/ü"] and xml_texts(second, "IsTruncated") == ["false"]
    _, _, after = call(open_fake, "GET", "/bkt?list-type=2&start-after=d%2Fz")
    assert xml_texts(after, "Key") == ["d/ü", "e"]
    status, _, bad = call(open_fake, "GET", "/bkt?list-type=2&continuation-token=%21%21")
    assert (status, error_code(bad)) == (400, "InvalidArgument")


def test_list_objects_v1_with_delimiter(open_fake: FakeObsServer) -> None:
    for key in ["a/1", "a/b/2", "a/c/3", "z"]:
        put(open_fake, key)
    _, _, body = call(open_fake, "GET", "/bkt?prefix=a%2F&delimiter=%2F&max-keys=2")
    assert xml_texts(body, "Key") == ["a/1"]
    assert xml_texts(body, "Prefix")[1:] == ["a/b/"]
    assert xml_texts(body, "NextMarker") == ["a/b/"]
    _, _, rest = call(open_fake, "GET", "/bkt?prefix=a%2F&delimiter=%2F&marker=a%2Fb%2F")
    assert xml_texts(rest, "Prefix")[1:] == ["a/c/"] and xml_texts(rest, "IsTruncated") == ["false"]


@pytest.mark.parametrize(
    ("header", "status", "content"),
    [
        ("bytes=2-4", 206, b"234"),
        ("bytes=7-", 206, b"789"),
        ("bytes=-2", 206, b"89"),
        ("bytes=8-100", 206, b"89"),
        ("bytes=0-1,4-5", 200, b"0123456789"),  # multiple ranges: the whole object, like S3
        ("items=0-1", 200, b"0123456789"),
    ],
)
def test_range_gets(open_fake: FakeObsServer, header: str, status: int, content: bytes) -> None:
    put(open_fake, "r", b"0123456789")
    got_status, headers, body = call(open_fake, "GET", "/bkt/r", headers={"Range": header})
    assert (got_status, body) == (status, content)
    if status == 206:
        assert re.fullmatch(r"bytes \d+-\d+/10", headers["content-range"])


def test_unsatisfiable_range(open_fake: FakeObsServer) -> None:
    put(open_fake, "r", b"0123456789")
    status, _, body = call(open_fake, "GET", "/bkt/r", headers={"Range": "bytes=10-"})
    assert (status, error_code(body)) == (416, "InvalidRange")


def test_content_md5_is_checked(open_fake: FakeObsServer) -> None:
    wrong = base64.b64encode(hashlib.md5(b"other").digest()).decode()
    status, _, body = call(open_fake, "PUT", "/bkt/k", b"data", {"Content-MD5": wrong})
    assert (status, error_code(body)) == (400, "BadDigest")
    status, _, body = call(open_fake, "PUT", "/bkt/k", b"data", {"Content-MD5": "not-base64!"})
    assert (status, error_code(body)) == (400, "InvalidDigest")
    status, _, body = call(open_fake, "PUT", "/bkt/k", b"data", {"x-amz-content-sha256": "0" * 64})
    assert (status, error_code(body)) == (400, "XAmzContentSHA256Mismatch")
    assert not open_fake.backend.buckets["bkt"].objects
    right = base64.b64encode(hashlib.md5(b"data").digest()).decode()
    assert call(open_fake, "PUT", "/bkt/k", b"data", {"Content-MD5": right})[0] == 200


def test_chunked_and_aws_chunked_bodies(open_fake: FakeObsServer) -> None:
    connection = http.client.HTTPConnection("127.0.0.1", open_fake.port, timeout=10)
    connection.request("PUT", "/bkt/chunked", body=iter([b"hello ", b"world"]), encode_chunked=True)
    assert connection.getresponse().status == 200
    connection.close()
    aws_chunked = b"6\r\nhello \r\n5\r\nworld\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n"
    headers = {
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
        "Content-Encoding": "aws-chunked",
        "x-amz-decoded-content-length": "11",
    }
    assert call(open_fake, "PUT", "/bkt/aws", aws_chunked, headers)[0] == 200
    for key in ("chunked", "aws"):
        obj = open_fake.backend.get_object("bkt", key)
        assert b"".join(obj.blob.read_range(0, obj.size)) == b"hello world"


def test_delete_multiple(open_fake: FakeObsServer) -> None:
    put(open_fake, "a")
    put(open_fake, "b")
    request = b"<Delete><Object><Key>a</Key></Object><Object><Key>gone</Key></Object></Delete>"
    status, _, body = call(open_fake, "POST", "/bkt?delete", request)
    assert status == 200 and xml_texts(body, "Key") == ["a", "gone"]
    assert list(open_fake.backend.buckets["bkt"].objects) == ["b"]
    status, _, body = call(open_fake, "POST", "/bkt?delete", b"<Delete><Object>")
    assert (status, error_code(body)) == (400, "MalformedXML")


def test_buckets(open_fake: FakeObsServer) -> None:
    assert call(open_fake, "HEAD", "/bkt")[0] == 200
    status, _, body = call(open_fake, "HEAD", "/nope")
    assert (status, body) == (404, b"")
    assert call(open_fake, "PUT", "/new-bucket")[0] == 200
    status, _, body = call(open_fake, "PUT", "/new-bucket")
    assert (status, error_code(body)) == (409, "BucketAlreadyOwnedByYou")
    status, _, body = call(open_fake, "PUT", "/Bad_Bucket")
    assert (status, error_code(body)) == (400, "InvalidBucketName")
    _, _, listing = call(open_fake, "GET", "/")
    assert xml_texts(listing, "Name") == ["bkt", "new-bucket"]
    _, _, location = call(open_fake, "GET", "/bkt?location")
    assert b"cn-north-4" in location
    assert call(open_fake, "DELETE", "/new-bucket")[0] == 204


def test_unsupported_operations_say_so(open_fake: FakeObsServer) -> None:
    status, _, body = call(open_fake, "PUT", "/bkt/a?acl", b"<AccessControlPolicy/>")
    assert (status, error_code(body)) == (501, "NotImplemented")
    status, _, body = call(open_fake, "GET", "/bkt?lifecycle")
    assert (status, error_code(body)) == (501, "NotImplemented")
    status, _, body = call(open_fake, "PUT", "/bkt?versioning", b"<VersioningConfiguration/>")
    assert (status, error_code(body)) == (501, "NotImplemented")


def test_errors_carry_code_message_and_request_id(open_fake: FakeObsServer) -> None:
    status, headers, body = call(open_fake, "GET", "/bkt/missing")
    assert status == 404
    assert error_code(body) == "NoSuchKey"
    assert xml_texts(body, "RequestId") == [headers["x-amz-request-id"]]
    assert open_fake.log.entries()[-1].error == "NoSuchKey"


def test_faults_status_latency_and_reset(open_fake: FakeObsServer) -> None:
    put(open_fake, "f", b"0123456789" * 1000)
    open_fake.add_fault(status=503, method="GET", count=1)
    open_fake.add_fault(latency=0.05, method="HEAD", count=1)
    open_fake.add_fault(reset=True, method="GET", path="^/bkt/f$", count=1)

    status, _, body = call(open_fake, "GET", "/bkt/f")
    assert (status, error_code(body)) == (503, "ServiceUnavailable")
    assert call(open_fake, "HEAD", "/bkt/f")[0] == 200
    with pytest.raises((http.client.IncompleteRead, ConnectionResetError)):
        call(open_fake, "GET", "/bkt/f")
    assert call(open_fake, "GET", "/bkt/f")[2] == b"0123456789" * 1000
    assert [e.fault for e in open_fake.log.entries()[1:]] == [
        "status:503",
        "latency:0.05",
        "reset",
        None,
    ]


def test_reset_mid_upload_stores_nothing(open_fake: FakeObsServer) -> None:
    open_fake.add_fault(reset=True, method="PUT", count=1)
    with pytest.raises((ConnectionResetError, BrokenPipeError, http.client.RemoteDisconnected)):
        call(open_fake, "PUT", "/bkt/up", b"x" * 2_000_000)
    assert not open_fake.backend.buckets["bkt"].objects


def test_reset_of_an_answer_without_body_drops_the_connection(open_fake: FakeObsServer) -> None:
    put(open_fake, "d")
    open_fake.add_fault(reset=True, method="DELETE", count=1)
    open_fake.add_fault(reset=True, method="HEAD", count=1)
    with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
        call(open_fake, "HEAD", "/bkt/d")
    with pytest.raises((ConnectionResetError, http.client.RemoteDisconnected)):
        call(open_fake, "DELETE", "/bkt/d")
    # The delete happened; only its answer was lost (a client must treat a retry as success).
    assert not open_fake.backend.buckets["bkt"].objects


def test_control_plane(open_fake: FakeObsServer) -> None:
    rule = {"status": 500, "path": "^/bkt/x$", "count": 1}
    status, _, body = call(open_fake, "POST", "/_majob/faults", json.dumps(rule).encode())
    assert status == 200 and json.loads(body)["status"] == 500
    assert call(open_fake, "GET", "/bkt/x")[0] == 500
    _, _, rules = call(open_fake, "GET", "/_majob/faults")
    assert json.loads(rules)[0]["fired"] == 1
    status, _, body = call(open_fake, "POST", "/_majob/faults", b'{"colour": 1}')
    assert status == 400 and b"colour" in body
    _, _, log = call(open_fake, "GET", "/_majob/log")
    assert [e["status"] for e in json.loads(log)] == [500]
    assert call(open_fake, "DELETE", "/_majob/log")[0] == 200
    assert call(open_fake, "DELETE", "/_majob/faults")[0] == 200
    assert call(open_fake, "GET", "/_majob/nothing")[0] == 404
    assert open_fake.log.entries() == [] and open_fake.faults.rules == []


@pytest.mark.parametrize("hang_up", ["close", "reset"])
def test_client_dying_mid_body_stores_nothing(
    open_fake: FakeObsServer, hang_up: str, capsys: pytest.CaptureFixture[str]
) -> None:
    client = socket.create_connection(("127.0.0.1", open_fake.port))
    if hang_up == "reset":
        client.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    client.sendall(
        b"PUT /bkt/k HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n" + b"x" * 1000
    )
    client.close()
    # The server logs the broken request when it notices; the deadline only catches a hang.
    wait_until(open_fake.log.entries, "the broken request in the log", timeout=30, interval=0.01)

    assert [(e.method, e.status) for e in open_fake.log.entries()] == [("PUT", 499)]
    assert not open_fake.backend.buckets["bkt"].objects
    assert capsys.readouterr().err == ""  # a client hanging up is not worth a traceback

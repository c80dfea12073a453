"""``ObsWire`` (majob's own signed GET) against the fake OBS, and the listing parser against OBS
answers: what the SDK read before, read the same."""

from __future__ import annotations

import hashlib
import io
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest

from majob.emulator.obs import FakeObsServer
from majob.errors import StorageAuthError, StorageError, StorageIntegrityError, StorageNotFound
from majob.storage.base import ObjectInfo
from majob.storage.config import Credentials
from majob.storage.localstate import file_multipart_etag
from majob.storage.obs import ObsObjectStore
from majob.storage.obs_answers import read_list_page, write_body
from majob.storage.obs_list_xml import parse_list_page
from majob.storage.obs_wire import ObsWire, WireAnswer, WireError, WireResponse
from majob.testing import FAKE_BUCKET, FAKE_CREDENTIALS, obs_config
from tests.loopback import serving_handler

# The shape of OBS's own answer (API reference, "Listing Objects in a Bucket"): the OBS
# namespace, an Owner and a StorageClass per entry, keys URL-encoded on request.
OBS_PAGE = b"""<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<ListBucketResult xmlns="http://obs.myhuaweicloud.com/doc/2015-06-30/">
  <Name>examplebucket</Name>
  <Prefix>data/</Prefix>
  <Marker></Marker>
  <NextMarker>data%2Fb+c%26d.txt</NextMarker>
  <MaxKeys>2</MaxKeys>
  <EncodingType>url</EncodingType>
  <IsTruncated>true</IsTruncated>
  <Contents>
    <Key>data%2Fa%C3%BC.txt</Key>
    <LastModified>2015-07-01T02:11:19.775Z</LastModified>
    <ETag>"a72e382246ac83e86bd203389849e71d"</ETag>
    <Size>9</Size>
    <Owner><ID>b4bf1b36d9ca43d984fbcb9491b6fce9</ID></Owner>
    <StorageClass>STANDARD</StorageClass>
    <Type>NORMAL</Type>
  </Contents>
  <Contents>
    <Key>data%2Fb+c%26d.txt</Key>
    <LastModified>2015-07-01T02:11:20.000Z</LastModified>
    <ETag>&quot;9a3b4a2e8e0b5e5b2b1d8c2d3e4f5a6b-3&quot;</ETag>
    <Size>12582912</Size>
    <Owner><ID>b4bf1b36d9ca43d984fbcb9491b6fce9</ID></Owner>
    <StorageClass>STANDARD</StorageClass>
  </Contents>
</ListBucketResult>"""


def test_an_obs_listing_page_is_read_with_its_keys_decoded() -> None:
    page = parse_list_page(OBS_PAGE)
    assert [o.key for o in page.objects] == ["data/aü.txt", "data/b c&d.txt"]
    assert [o.size for o in page.objects] == [9, 12582912]
    assert page.objects[0].etag == "a72e382246ac83e86bd203389849e71d"
    assert page.objects[1].etag == "9a3b4a2e8e0b5e5b2b1d8c2d3e4f5a6b-3"
    assert page.objects[0].last_modified == 1435716679.0  # 2015-07-01T02:11:19Z
    assert page.next_marker == "data/b c&d.txt"


def test_fields_in_another_order_are_read_the_same() -> None:
    moved = OBS_PAGE.replace(
        b'<ETag>"a72e382246ac83e86bd203389849e71d"</ETag>\n    <Size>9</Size>',
        b'<Size>9</Size><ETag>"a72e382246ac83e86bd203389849e71d"</ETag>',
    )
    assert moved != OBS_PAGE
    assert parse_list_page(moved) == parse_list_page(OBS_PAGE)


def test_a_last_page_has_no_marker_and_an_empty_one_no_objects() -> None:
    last = OBS_PAGE.replace(b"<IsTruncated>true", b"<IsTruncated>false")
    assert parse_list_page(last).next_marker is None
    empty = b'<?xml version="1.0"?><ListBucketResult><IsTruncated>false</IsTruncated></ListBucketResult>'
    assert parse_list_page(empty).objects == []
    without_marker = OBS_PAGE.replace(b"<NextMarker>data%2Fb+c%26d.txt</NextMarker>", b"")
    assert parse_list_page(without_marker).next_marker == "data/b c&d.txt"  # the last key


@pytest.mark.parametrize(
    "broken",
    [
        b"not a listing",
        OBS_PAGE[:-40],  # torn
        OBS_PAGE.replace(b"data%2Fa%C3%BC.txt", b"a\x01b"),  # a raw control character
        OBS_PAGE.replace(b"<Key>data%2Fa%C3%BC.txt</Key>", b""),  # an entry without a key
    ],
)
def test_an_unreadable_page_is_a_value_error(broken: bytes) -> None:
    with pytest.raises(ValueError):
        parse_list_page(broken)


def test_the_parser_reads_the_fake_answers_as_the_sdk_did(obs_store: ObsObjectStore) -> None:
    keys = ["p/a b.txt", "p/ü&<>.bin", "p/x+y%z", "p/tab\there", "p/nl\nkey", "p/deep/er/1"]
    for key in keys:
        obs_store.put_bytes(FAKE_BUCKET, key, key.encode())
    sdk = obs_store._client.listObjects(FAKE_BUCKET, prefix="p/", max_keys=4, encoding_type="url")
    assert sdk.status == 200
    ours = obs_store.list_page(FAKE_BUCKET, "p/", max_keys=4)
    theirs = read_list_page(sdk.body)
    assert [(o.key, o.size, o.etag) for o in ours.objects] == [
        (o.key, o.size, o.etag) for o in theirs.objects
    ]
    assert ours.next_marker == theirs.next_marker
    rest = obs_store.list_page(FAKE_BUCKET, "p/", marker=ours.next_marker)
    assert sorted(o.key for o in [*ours.objects, *rest.objects]) == sorted(keys)
    assert rest.next_marker is None


def _wire(endpoint: str, **settings: object) -> ObsWire:
    return ObsWire(obs_config(endpoint, **settings), FAKE_CREDENTIALS)


def _body(response: WireResponse) -> bytes:
    return response.read()


def test_a_signed_get_reads_an_object_and_keeps_the_connection(
    fake_obs_server: FakeObsServer, obs_store: ObsObjectStore
) -> None:
    data = b"x" * 100_000
    obs_store.put_bytes(FAKE_BUCKET, "w/a b+ü.bin", data, metadata={"md5": "m"})
    wire = _wire(fake_obs_server.endpoint)
    try:
        for _ in range(3):
            answer = wire.get(FAKE_BUCKET, "w/a b+ü.bin", {}, _body)
            assert isinstance(answer, WireAnswer) and answer.value == data
        assert len(wire._all) == 1  # one connection, kept alive
    finally:
        wire.close()


def test_an_error_answer_carries_the_code_and_the_request_id(
    fake_obs_server: FakeObsServer,
) -> None:
    wire = _wire(fake_obs_server.endpoint)
    try:
        answer = wire.get(FAKE_BUCKET, "w/missing", {}, _body)
        assert isinstance(answer, WireError)
        assert (answer.status, answer.errorCode) == (404, "NoSuchKey")
        assert answer.requestId
        # the connection still serves the next request
        assert isinstance(wire.get(FAKE_BUCKET, "", {"max-keys": "1"}, _body), WireAnswer)
    finally:
        wire.close()


def test_a_wrong_secret_is_refused_as_the_sdk_path_refuses_it(
    fake_obs_server: FakeObsServer,
) -> None:
    wrong = Credentials(FAKE_CREDENTIALS.access_key, "not-the-secret", None, source="test")
    store = ObsObjectStore(obs_config(fake_obs_server.endpoint, credentials=wrong, retries=0))
    try:
        with pytest.raises(StorageAuthError):
            store.list_page(FAKE_BUCKET, "")
    finally:
        store.close()


def test_get_file_maps_a_missing_object_and_retries_a_reset(
    fake_obs_server: FakeObsServer, obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    with pytest.raises(StorageNotFound):
        obs_store.get_file(FAKE_BUCKET, "w/none", tmp_path / "none")
    data = b"y" * 300_000
    obs_store.put_bytes(FAKE_BUCKET, "w/dl", data)
    fake_obs_server.add_fault(reset=True, method="GET", path=r"/w/dl$", count=1)
    info = obs_store.get_file(FAKE_BUCKET, "w/dl", tmp_path / "sub" / "dl")
    assert (tmp_path / "sub" / "dl").read_bytes() == data
    assert info.etag == hashlib.md5(data).hexdigest() and info.size == len(data)
    assert [p.name for p in (tmp_path / "sub").iterdir()] == ["dl"]  # no temporary file left


def test_a_500_every_time_is_a_storage_error_after_the_retries(
    fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    store = ObsObjectStore(obs_config(fake_obs_server.endpoint, retries=1, timeout=5.0))
    store.put_bytes(FAKE_BUCKET, "w/bad", b"z")
    fake_obs_server.add_fault(status=500, method="GET")
    try:
        with pytest.raises(StorageError) as caught:
            store.get_file(FAKE_BUCKET, "w/bad", tmp_path / "bad")
    finally:
        store.close()
    assert caught.value.status == 500
    assert fake_obs_server.log.count(method="GET") == 2


class _Chunked(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hang_up = False  # close the connection after each answer without saying so

    def do_GET(self) -> None:
        self.close_connection = self.hang_up
        self.send_response(200)
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for piece in (b"hello ", b"chunked ", b"world"):
            self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
        self.wfile.write(b"0\r\n\r\n")

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture(params=[False, True], ids=["kept", "hung-up"])
def chunked_endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    with serving_handler(type("Handler", (_Chunked,), {"hang_up": request.param})) as endpoint:
        yield endpoint


def test_a_chunked_answer_is_read_whole_and_a_hung_up_connection_opened_again(
    chunked_endpoint: str,
) -> None:
    wire = _wire(chunked_endpoint)
    try:
        for _ in range(3):
            answer = wire.get("b", "k", {}, _body)
            assert isinstance(answer, WireAnswer) and answer.value == b"hello chunked world"
        assert len(wire._all) == 1
    finally:
        wire.close()


def test_only_the_v4_signature_takes_the_wire() -> None:
    assert ObsWire.speaks(obs_config("http://127.0.0.1:9"))
    assert not ObsWire.speaks(obs_config("http://127.0.0.1:9", signature="obs"))


@pytest.mark.parametrize("size", [0, 4096, 3 * 4096, 3 * 4096 + 17])
def test_a_multipart_object_is_checked_by_its_etag_in_one_pass(tmp_path: Path, size: int) -> None:
    data = bytes(range(256)) * (size // 256) + b"x" * (size % 256)
    (tmp_path / "model").write_bytes(data)
    etag = file_multipart_etag(tmp_path / "model", 4096)
    info = ObjectInfo("k", size, etag, metadata={"md5-part-size": "4096"})
    got = write_body(io.BytesIO(data), info, FAKE_BUCKET, tmp_path / "got", sized=True)
    assert (tmp_path / "got").read_bytes() == data
    assert got.metadata["md5"] == hashlib.md5(data).hexdigest()  # what the manifest records
    wrong = ObjectInfo("k", size, "0" * 32 + "-9", metadata={"md5-part-size": "4096"})
    with pytest.raises(StorageIntegrityError, match="multipart ETag"):
        write_body(io.BytesIO(data), wrong, FAKE_BUCKET, tmp_path / "bad", sized=True)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["got", "model"]  # nothing else landed

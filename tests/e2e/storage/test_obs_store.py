"""``ObsObjectStore`` (esdk-obs-python underneath) against the fake OBS: every protocol method,
resumable multipart, and the failures a user meets: a wrong key, no server, faults, bad MD5."""

from __future__ import annotations

import base64
import hashlib
import os
import socket
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.emulator.obs import DEFAULT_SECRET_KEY, FakeObsServer, fake_obs
from majob.emulator.obs.models import Blob
from majob.errors import (
    StorageAuthError,
    StorageError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.storage.base import UploadedPart
from majob.storage.config import Credentials, ObsConfig
from majob.storage.obs import ObsObjectStore, open_store
from majob.testing import FAKE_BUCKET, fake_obs_process, obs_config

PART = 100 * 1024  # the smallest part OBS accepts


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


@pytest.fixture(params=["v4", "v2", "obs"])
def any_store(
    request: pytest.FixtureRequest, fake_obs_server: FakeObsServer
) -> Iterator[ObsObjectStore]:
    store = ObsObjectStore(obs_config(fake_obs_server.endpoint, signature=request.param))
    yield store
    store.close()


def test_every_method_round_trips(
    any_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    store, data = any_store, os.urandom(50_000)
    source = tmp_path / "src.bin"
    source.write_bytes(data)

    put = store.put_file(
        FAKE_BUCKET, "dir/ü b.bin", source, content_md5=md5_b64(data), metadata={"majob-md5": "m"}
    )
    store.put_bytes(FAKE_BUCKET, "dir/small.txt", b"hello", metadata={"k": "v"})

    assert put.etag == hashlib.md5(data).hexdigest() and put.size == len(data)
    head = store.head(FAKE_BUCKET, "dir/ü b.bin")
    assert head is not None
    assert (head.size, head.etag, dict(head.metadata)) == (len(data), put.etag, {"majob-md5": "m"})
    assert head.last_modified > 0
    assert store.head(FAKE_BUCKET, "dir/missing") is None
    assert [o.key for o in store.list_all(FAKE_BUCKET, "dir/")] == ["dir/small.txt", "dir/ü b.bin"]
    assert store.get_bytes(FAKE_BUCKET, "dir/small.txt") == b"hello"
    info = store.get_file(FAKE_BUCKET, "dir/ü b.bin", tmp_path / "out" / "x.bin")
    assert (tmp_path / "out" / "x.bin").read_bytes() == data
    assert info.metadata == {"majob-md5": "m"}
    assert os.listdir(tmp_path / "out") == ["x.bin"]  # no temporary file left behind
    store.delete_many(FAKE_BUCKET, ["dir/ü b.bin", "dir/small.txt", "dir/never-there"])
    assert list(store.list_all(FAKE_BUCKET, "")) == []
    with pytest.raises(StorageNotFound, match="NoSuchKey"):
        store.get_bytes(FAKE_BUCKET, "dir/small.txt")


def test_list_page_follows_markers(obs_store: ObsObjectStore) -> None:
    for i in range(7):
        obs_store.put_bytes(FAKE_BUCKET, f"page/k{i}", b"x")
    obs_store.put_bytes(FAKE_BUCKET, "pager", b"x")

    pages, marker = [], None
    while True:
        page = obs_store.list_page(FAKE_BUCKET, "page/", marker=marker, max_keys=3)
        pages.append([o.key for o in page.objects])
        if page.next_marker is None:
            break
        marker = page.next_marker
    assert pages == [
        ["page/k0", "page/k1", "page/k2"],
        ["page/k3", "page/k4", "page/k5"],
        ["page/k6"],
    ]


def test_delete_many_batches_over_a_thousand_keys(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    keys = [f"bulk/{i:05d}" for i in range(1500)]
    for key in keys:
        fake_obs_server.backend.put_object(
            FAKE_BUCKET, key, Blob(0, hashlib.md5().digest(), data=b"")
        )

    obs_store.delete_many(FAKE_BUCKET, keys)

    assert not fake_obs_server.backend.buckets[FAKE_BUCKET].objects
    assert fake_obs_server.log.count("POST", r"^delete") == 2


def test_multipart_resumes_with_a_new_store(fake_obs_server: FakeObsServer, tmp_path: Path) -> None:
    data = os.urandom(3 * PART + 777)
    source = tmp_path / "big.bin"
    source.write_bytes(data)
    first = ObsObjectStore(obs_config(fake_obs_server.endpoint))
    upload = first.create_multipart(FAKE_BUCKET, "big/obj", metadata={"majob-md5": "abc"})
    first.upload_part(FAKE_BUCKET, upload, 1, source, 0, PART)
    first.upload_part(FAKE_BUCKET, upload, 3, source, 2 * PART, PART)
    first.close()  # "the process died": parts 1 and 3 are on the server

    second = ObsObjectStore(obs_config(fake_obs_server.endpoint))
    [found] = second.list_multipart_uploads(FAKE_BUCKET, "big/")
    assert found == upload
    done = {p.number: p for p in second.list_parts(FAKE_BUCKET, found)}
    assert sorted(done) == [1, 3] and done[1].size == PART
    assert done[1].etag == hashlib.md5(data[:PART]).hexdigest()
    parts: list[UploadedPart] = list(done.values())
    for number, offset, size in ((2, PART, PART), (4, 3 * PART, 777)):
        parts.append(second.upload_part(FAKE_BUCKET, found, number, source, offset, size))
    info = second.complete_multipart(FAKE_BUCKET, found, parts)

    assert info.size == len(data) and info.etag.endswith("-4")
    assert second.get_bytes(FAKE_BUCKET, "big/obj") == data
    head = second.head(FAKE_BUCKET, "big/obj")
    assert head is not None and head.metadata == {"majob-md5": "abc"}
    assert second.list_multipart_uploads(FAKE_BUCKET, "") == []
    second.close()


def test_abort_removes_orphans_and_is_idempotent(obs_store: ObsObjectStore, tmp_path: Path) -> None:
    source = tmp_path / "p.bin"
    source.write_bytes(os.urandom(PART))
    upload = obs_store.create_multipart(FAKE_BUCKET, "orphan")
    obs_store.upload_part(FAKE_BUCKET, upload, 1, source, 0, PART)

    obs_store.abort_multipart(FAKE_BUCKET, upload)
    obs_store.abort_multipart(FAKE_BUCKET, upload)

    assert obs_store.list_multipart_uploads(FAKE_BUCKET, "") == []


def test_small_middle_part_is_refused(obs_store: ObsObjectStore, tmp_path: Path) -> None:
    source = tmp_path / "p.bin"
    source.write_bytes(os.urandom(2 * PART))
    upload = obs_store.create_multipart(FAKE_BUCKET, "small-parts")
    parts = [
        obs_store.upload_part(FAKE_BUCKET, upload, 1, source, 0, PART - 1),
        obs_store.upload_part(FAKE_BUCKET, upload, 2, source, PART - 1, PART + 1),
    ]
    with pytest.raises(StorageError, match="EntityTooSmall") as caught:
        obs_store.complete_multipart(FAKE_BUCKET, upload, parts)
    assert caught.value.request_id


def test_wrong_secret_key_is_one_clear_error(
    fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    wrong = "not-the-secret-key-0123456789"
    store = ObsObjectStore(
        obs_config(fake_obs_server.endpoint, credentials=Credentials("MAJOBFAKEACCESSKEY00", wrong))
    )
    source = tmp_path / "f.txt"
    source.write_bytes(b"x")

    with pytest.raises(StorageAuthError) as caught:
        store.put_file(FAKE_BUCKET, "f.txt", source)
    store.close()

    error = caught.value
    assert error.code == "SignatureDoesNotMatch" and error.status == 403
    assert error.key == "f.txt" and error.request_id
    text = "\n".join(error.lines())
    assert wrong not in text and DEFAULT_SECRET_KEY not in text
    assert "HUAWEICLOUD_SDK_SK" in text
    assert not fake_obs_server.backend.buckets[FAKE_BUCKET].objects
    assert fake_obs_server.log.count("PUT") == 1  # an auth error is not retried


def test_unknown_access_key_is_an_auth_error(fake_obs_server: FakeObsServer) -> None:
    store = ObsObjectStore(
        obs_config(fake_obs_server.endpoint, credentials=Credentials("NOBODY", "x"))
    )
    with pytest.raises(StorageAuthError, match="InvalidAccessKeyId"):
        store.put_bytes(FAKE_BUCKET, "k", b"x")
    store.close()


@pytest.mark.parametrize("signature", ["v4", "v2", "obs"])
def test_temporary_credentials_send_their_token(signature: str) -> None:
    keys, tokens = {"TEMPAK": "TEMPSK"}, {"TEMPAK": "session-token-1"}
    with fake_obs(credentials=keys, tokens=tokens, buckets=(FAKE_BUCKET,)) as server:
        good = Credentials("TEMPAK", "TEMPSK", "session-token-1")
        with ObsObjectStore(
            obs_config(server.endpoint, signature=signature, credentials=good)
        ) as store:
            store.put_bytes(FAKE_BUCKET, "t", b"1")
        stale = Credentials("TEMPAK", "TEMPSK", "session-token-0")
        with (
            ObsObjectStore(
                obs_config(server.endpoint, signature=signature, credentials=stale)
            ) as store,
            pytest.raises(StorageAuthError, match="InvalidToken") as caught,
        ):
            store.put_bytes(FAKE_BUCKET, "t", b"2")
        assert "session-token" not in "\n".join(caught.value.lines())
        assert server.backend.get_object(FAKE_BUCKET, "t").size == 1


def test_refused_connection_is_unreachable() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = ObsObjectStore(obs_config(f"http://127.0.0.1:{port}", timeout=2.0, retries=1))
    with pytest.raises(StorageUnreachable, match="refused") as caught:
        store.head(FAKE_BUCKET, "k")
    store.close()
    assert caught.value.hint and "MAJOB_OBS_ENDPOINT" in caught.value.hint


def chained(error: BaseException) -> str:
    """Every exception ``error`` carries (causes and contexts), each as a traceback shows it."""
    seen: list[BaseException] = []
    current: BaseException | None = error
    while current is not None and current not in seen:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return "\n".join("".join(traceback.format_exception_only(e)) for e in seen)


def test_an_sdk_failure_is_chained_masked(tmp_path: Path) -> None:
    # The secret key is the very text the failure quotes: whatever the SDK's exception says,
    # neither majob's error nor what it is chained to (MAJOB_DEBUG=1 prints both) shows it.
    secret = "Connection refused"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = ObsObjectStore(
        obs_config(
            f"http://127.0.0.1:{port}",
            timeout=2.0,
            retries=0,
            credentials=Credentials("MAJOBFAKEACCESSKEY00", secret),
        )
    )
    with pytest.raises(StorageUnreachable) as caught:
        store.head(FAKE_BUCKET, "k")
    store.close()
    assert caught.value.__cause__ is not None
    assert secret not in chained(caught.value)
    assert secret not in "".join(traceback.format_exception(caught.value))


def test_silent_endpoint_fails_within_the_timeout() -> None:
    # A socket that listens but never answers: the connection opens, the reply never comes.
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        store = ObsObjectStore(obs_config(f"http://127.0.0.1:{port}", timeout=1.0, retries=5))
        with pytest.raises(StorageUnreachable, match="in time"):
            store.head(FAKE_BUCKET, "k")
        store.close()
        # Retries stop when the configured timeout is spent: one attempt waits it out (a second
        # may start just before it ends), not the 1 + 5 that retries=5 alone would allow.
        silent.setblocking(False)
        attempts = 0
        while True:
            try:
                connection, _ = silent.accept()
            except BlockingIOError:
                break
            connection.close()
            attempts += 1
    assert 1 <= attempts <= 2


def test_content_md5_mismatch_is_an_integrity_error(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "f.txt"
    source.write_bytes(b"what was sent")
    with pytest.raises(StorageIntegrityError, match="BadDigest"):
        obs_store.put_file(FAKE_BUCKET, "f.txt", source, content_md5=md5_b64(b"something else"))
    assert not fake_obs_server.backend.buckets[FAKE_BUCKET].objects


def test_transient_503s_are_retried(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "f.bin"
    source.write_bytes(os.urandom(10_000))
    fake_obs_server.add_fault(status=503, method="PUT", count=2)

    obs_store.put_file(FAKE_BUCKET, "f.bin", source)

    assert obs_store.get_bytes(FAKE_BUCKET, "f.bin") == source.read_bytes()
    assert [e.status for e in fake_obs_server.log.entries() if e.method == "PUT"] == [503, 503, 200]


def test_persistent_500s_give_up_with_the_code(fake_obs_server: FakeObsServer) -> None:
    store = ObsObjectStore(obs_config(fake_obs_server.endpoint, retries=2))
    fake_obs_server.add_fault(status=500, method="GET")
    with pytest.raises(StorageError, match="InternalError") as caught:
        store.get_bytes(FAKE_BUCKET, "k")
    store.close()
    assert caught.value.status == 500
    assert fake_obs_server.log.count("GET") == 3


def test_connection_reset_mid_part_is_retried(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    data = os.urandom(2 * PART)
    source = tmp_path / "f.bin"
    source.write_bytes(data)
    upload = obs_store.create_multipart(FAKE_BUCKET, "reset")
    fake_obs_server.add_fault(reset=True, query=r"partNumber=2\b", count=1)

    parts = [
        obs_store.upload_part(FAKE_BUCKET, upload, n, source, (n - 1) * PART, PART) for n in (1, 2)
    ]
    obs_store.complete_multipart(FAKE_BUCKET, upload, parts)

    assert obs_store.get_bytes(FAKE_BUCKET, "reset") == data
    assert [e.fault for e in fake_obs_server.log.entries() if "partNumber=2" in e.query] == [
        "reset",
        None,
    ]


def test_connection_reset_mid_download_is_retried(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    data = os.urandom(300_000)
    obs_store.put_bytes(FAKE_BUCKET, "dl", data)
    fake_obs_server.add_fault(reset=True, method="GET", path=r"/dl$", count=1)

    obs_store.get_file(FAKE_BUCKET, "dl", tmp_path / "dl")

    assert (tmp_path / "dl").read_bytes() == data
    assert os.listdir(tmp_path) == ["dl"]


def test_download_whose_md5_is_not_the_etag_is_refused(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    obs_store.put_bytes(FAKE_BUCKET, "rot", b"original")
    stored = fake_obs_server.backend.get_object(FAKE_BUCKET, "rot")
    stored.blob = Blob(8, stored.blob.md5, data=b"bitr0t!!")  # same ETag, other bytes

    with pytest.raises(StorageIntegrityError, match="does not match the ETag"):
        obs_store.get_file(FAKE_BUCKET, "rot", tmp_path / "rot")

    assert os.listdir(tmp_path) == []  # neither the file nor a temporary one
    assert fake_obs_server.log.count("GET") == 1  # corruption is not retried


def test_a_download_is_checked_against_the_md5_metadata_too(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    # What majob stores on its multipart uploads, whose ETag is no MD5: here a wrong one.
    obs_store.put_bytes(FAKE_BUCKET, "meta", b"payload", metadata={"md5": "0" * 32})

    with pytest.raises(StorageIntegrityError, match="does not match the md5 the object"):
        obs_store.get_file(FAKE_BUCKET, "meta", tmp_path / "meta")

    assert os.listdir(tmp_path) == []


def test_open_store_reads_the_environment(
    obs_env: dict[str, str], fake_obs_server: FakeObsServer
) -> None:
    with open_store() as store:
        store.put_bytes(FAKE_BUCKET, "env", b"1")
    assert fake_obs_server.backend.get_object(FAKE_BUCKET, "env").size == 1
    assert {e.auth for e in fake_obs_server.log.entries()} == {"v4"}


def test_persisted_fake_keeps_objects_and_uploads_across_restarts(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    source = tmp_path / "p.bin"
    source.write_bytes(os.urandom(PART))
    with fake_obs(data_dir=data_dir, buckets=(FAKE_BUCKET,)) as server:
        store = ObsObjectStore(obs_config(server.endpoint))
        store.put_bytes(FAKE_BUCKET, "kept", b"data", metadata={"a": "1"})
        upload = store.create_multipart(FAKE_BUCKET, "half")
        store.upload_part(FAKE_BUCKET, upload, 1, source, 0, PART)
        store.close()
    with fake_obs(data_dir=data_dir, buckets=(FAKE_BUCKET,)) as server:
        store = ObsObjectStore(obs_config(server.endpoint))
        head = store.head(FAKE_BUCKET, "kept")
        assert head is not None and head.metadata == {"a": "1"}
        assert store.get_bytes(FAKE_BUCKET, "kept") == b"data"
        assert store.list_multipart_uploads(FAKE_BUCKET, "") == [upload]
        [part] = store.list_parts(FAKE_BUCKET, upload)
        store.complete_multipart(FAKE_BUCKET, upload, [part])
        assert store.get_bytes(FAKE_BUCKET, "half") == source.read_bytes()
        store.close()


@pytest.mark.slow
def test_fake_in_its_own_process_is_driven_over_http(tmp_path: Path) -> None:
    with fake_obs_process(data_dir=tmp_path / "data") as fake:
        store = ObsObjectStore(obs_config(fake.endpoint))
        fake.add_fault(status=503, method="PUT", count=1)
        store.put_bytes(FAKE_BUCKET, "remote", b"hi")
        assert store.get_bytes(FAKE_BUCKET, "remote") == b"hi"
        store.close()
        statuses = [(e["method"], e["status"], e["fault"]) for e in fake.log()]
        assert statuses == [("PUT", 503, "status:503"), ("PUT", 200, None), ("GET", 200, None)]
        fake.clear_log()
        assert fake.log() == []


def test_config_without_endpoint_or_region_is_a_config_error() -> None:
    from majob.errors import ConfigError

    with pytest.raises(ConfigError, match="no OBS endpoint") as caught:
        ObsObjectStore(ObsConfig(credentials=Credentials("a", "b")))
    assert caught.value.hint and "MAJOB_OBS_REGION" in caught.value.hint


def test_a_part_is_hashed_as_sent_and_checked_against_the_servers_etag(
    obs_store: ObsObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    data = os.urandom(2 * PART + 5)
    source = tmp_path / "f.bin"
    source.write_bytes(data)
    upload = obs_store.create_multipart(FAKE_BUCKET, "hashed")
    part = obs_store.upload_part(FAKE_BUCKET, upload, 2, source, PART, PART)
    assert part == UploadedPart(2, hashlib.md5(data[PART : 2 * PART]).hexdigest(), PART)

    # A server that stored other bytes than those sent (its ETag says so): refused, by name.
    real = obs_store._client.uploadPart

    def other_etag(*args: object, **kwargs: object) -> object:
        result = real(*args, **kwargs)
        result.body.etag = '"' + "0" * 32 + '"'
        return result

    monkeypatch.setattr(obs_store._client, "uploadPart", other_etag)
    with pytest.raises(StorageIntegrityError, match=r"part 1 was stored with ETag 0{32}"):
        obs_store.upload_part(FAKE_BUCKET, upload, 1, source, 0, PART)


def test_a_part_of_a_file_that_shrank_is_refused_not_sent_short(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    source = tmp_path / "f.bin"
    source.write_bytes(os.urandom(PART + 10))
    upload = obs_store.create_multipart(FAKE_BUCKET, "shrank")
    with pytest.raises(StorageIntegrityError, match="changed or went away"):
        obs_store.upload_part(FAKE_BUCKET, upload, 1, source, 0, 2 * PART)
    assert obs_store.list_parts(FAKE_BUCKET, upload) == []
    assert fake_obs_server.log.count("PUT") == 1  # not retried

"""Bad input and faults: wrong key, no server, a killed upload, a malicious listing."""

from __future__ import annotations

import hashlib
import os
import signal
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from majob.emulator.obs import DEFAULT_ACCESS_KEY, FakeObsServer
from majob.emulator.obs.models import Blob
from majob.errors import (
    StorageAuthError,
    StorageIntegrityError,
    StorageNotFound,
    StorageUnreachable,
)
from majob.storage.config import Credentials
from majob.storage.download import download_tree
from majob.storage.localstate import UploadRecords, file_multipart_etag
from majob.storage.obs import ObsObjectStore
from majob.storage.plan import LocalFile, plan_sync
from majob.storage.sync import sync_dir
from majob.storage.transfer import TransferOptions, Uploader, multipart_etag
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET, obs_config, wait_until

DEST = ObsUri(FAKE_BUCKET, "jobs/code/")
MiB = 1 << 20


def _files(root: Path, count: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for i in range(count):
        (root / f"f{i}.txt").write_text(f"{i}\n")


def test_wrong_secret_key_one_clear_error_and_nothing_uploaded(
    tmp_path: Path, fake_obs_server: FakeObsServer
) -> None:
    _files(tmp_path / "src", 5)
    secret = "not-the-secret-0123456789"
    store = ObsObjectStore(
        obs_config(fake_obs_server.endpoint, credentials=Credentials(DEFAULT_ACCESS_KEY, secret))
    )
    try:
        with pytest.raises(StorageAuthError) as info:
            sync_dir(store, tmp_path / "src", DEST)
    finally:
        store.close()
    error = info.value
    assert error.code == "SignatureDoesNotMatch" and error.bucket == FAKE_BUCKET
    assert secret not in str(error) and secret not in (error.hint or "")
    assert fake_obs_server.backend.bucket(FAKE_BUCKET).objects == {}
    assert fake_obs_server.log.count("PUT") == 0


def test_silent_endpoint_fails_after_one_time_budget(tmp_path: Path) -> None:
    # A socket that listens but never answers: each attempt waits out the timeout. The store
    # stops retrying once the timeout is spent, and sync does not try again an endpoint that
    # never answered, so the user gets the error after one time budget: one connection (two
    # if a retry started just before the budget ran out), not one per retry of each layer.
    _files(tmp_path / "src", 2)
    with socket.socket() as silent:
        silent.bind(("127.0.0.1", 0))
        silent.listen(16)
        port = silent.getsockname()[1]
        store = ObsObjectStore(obs_config(f"http://127.0.0.1:{port}", timeout=1.0, retries=5))
        try:
            with pytest.raises(StorageUnreachable, match="did not answer in time"):
                sync_dir(store, tmp_path / "src", DEST)
        finally:
            store.close()
        assert 1 <= _accepted(silent) <= 2


def _accepted(listening: socket.socket) -> int:
    """How many connections reached ``listening`` (closed or not): one per request sent."""
    listening.setblocking(False)
    count = 0
    while True:
        try:
            connection, _ = listening.accept()
        except BlockingIOError:
            return count
        connection.close()
        count += 1


@pytest.mark.slow
def test_sigkill_during_multipart_upload_then_resume(
    tmp_path: Path,
    fake_obs_server: FakeObsServer,
    obs_store: ObsObjectStore,
    obs_env: dict[str, str],
    cache_dir: Path,
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    data = os.urandom(6 * MiB + 4321)
    (src / "weights.bin").write_bytes(data)
    # An upload another client started (no local record, recent): it may still be in progress
    # elsewhere, so this sync must leave it alone (tests/e2e/sync/test_stale_uploads.py).
    orphan = obs_store.create_multipart(FAKE_BUCKET, "jobs/code/old.bin")
    # Parts 3 and later hang for a while, so the process is surely killed in the middle.
    fake_obs_server.add_fault(latency=2.0, method="PUT", query=r"partNumber=([3-9])\b")
    command = [sys.executable, "-m", "majob", "obs", "sync", str(src), DEST.uri]
    command += ["--part-size", "1", "--multipart-threshold", "1", "--jobs", "2"]
    process = subprocess.Popen(
        command, env=dict(os.environ), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    try:

        def two_parts_sent_or_done() -> bool:
            done = [
                e
                for e in fake_obs_server.log.entries()
                if e.method == "PUT" and "partNumber" in e.query and e.status == 200
            ]
            return len(done) >= 2 or process.poll() is not None

        wait_until(two_parts_sent_or_done, "two parts to be sent", timeout=30, interval=0.02)
        assert process.poll() is None, "the upload finished before it could be killed"
        os.kill(process.pid, signal.SIGKILL)
    finally:
        process.wait()
        assert process.stderr is not None
        process.stderr.close()
    assert process.returncode == -signal.SIGKILL
    assert obs_store.head(FAKE_BUCKET, "jobs/code/weights.bin") is None
    fake_obs_server.faults.clear()

    options = TransferOptions(part_size=MiB, multipart_threshold=MiB, jobs=2)
    _, result = sync_dir(obs_store, src, DEST, options=options, cache_dir=cache_dir)
    assert result is not None and result.uploaded == 1
    assert result.resumed_parts >= 2 and result.aborted_uploads == 0
    info = obs_store.head(FAKE_BUCKET, "jobs/code/weights.bin")
    assert info is not None and info.metadata["md5-part-size"] == str(MiB)
    assert info.etag == file_multipart_etag(src / "weights.bin", MiB)
    assert obs_store.get_bytes(FAKE_BUCKET, "jobs/code/weights.bin") == data
    left = obs_store.list_multipart_uploads(FAKE_BUCKET, "")
    assert [u.upload_id for u in left] == [orphan.upload_id]
    first_parts = [
        e
        for e in fake_obs_server.log.entries()
        if e.method == "PUT" and "partNumber=1&" in e.query + "&" and e.status == 200
    ]
    assert len(first_parts) == 1  # part 1 was not sent again


@pytest.mark.parametrize(
    "evil",
    ["data/../../escape.txt", "data/sub/../../../escape.txt", "data/..\\..\\escape.txt", "data//x"],
)
def test_download_refuses_keys_that_escape_the_target(
    tmp_path: Path, fake_obs_server: FakeObsServer, obs_store: ObsObjectStore, evil: str
) -> None:
    backend = fake_obs_server.backend
    for key, payload in (("data/ok.txt", b"fine"), (evil, b"pwned")):
        blob = Blob(len(payload), hashlib.md5(payload).digest(), data=payload)
        backend.put_object(FAKE_BUCKET, key, blob)  # the model holds any key, as real OBS does
    target = tmp_path / "deep" / "out"
    with pytest.raises(StorageIntegrityError, match="refusing to download key") as info:
        download_tree(obs_store, ObsUri(FAKE_BUCKET, "data/"), target)
    assert info.value.key == evil
    assert not target.exists()  # checked before a single byte was written
    assert not list(tmp_path.rglob("escape.txt"))


def test_download_round_trip_and_corrupt_object(
    tmp_path: Path, fake_obs_server: FakeObsServer, obs_store: ObsObjectStore
) -> None:
    src = tmp_path / "src"
    (src / "sub").mkdir(parents=True)
    big = os.urandom(MiB + 17)
    (src / "big.bin").write_bytes(big)
    (src / "sub" / "a.txt").write_text("a")
    options = TransferOptions(part_size=256 * 1024, multipart_threshold=512 * 1024)
    sync_dir(obs_store, src, DEST, options=options)
    out = tmp_path / "out"
    result = download_tree(obs_store, DEST, out)
    assert result.downloaded == 2 and result.unverified == []
    assert (out / "big.bin").read_bytes() == big and (out / "sub" / "a.txt").read_text() == "a"

    # An object whose bytes do not match its MD5 is never renamed into place.
    payload = b"the stored bytes"
    wrong = hashlib.md5(b"other bytes").digest()
    fake_obs_server.backend.put_object(
        FAKE_BUCKET, "bad/x.bin", Blob(len(payload), wrong, data=payload)
    )
    with pytest.raises(StorageIntegrityError, match="MD5"):
        download_tree(obs_store, ObsUri(FAKE_BUCKET, "bad/"), tmp_path / "bad")
    assert not [p for p in (tmp_path / "bad").rglob("*") if p.is_file()]


def test_fatal_error_mid_multipart_leaves_no_upload_behind(
    tmp_path: Path,
    fake_obs_server: FakeObsServer,
    obs_store: ObsObjectStore,
    cache_dir: Path,
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "weights.bin").write_bytes(os.urandom(3 * MiB))
    # Credentials revoked half-way: part 2 is refused the way OBS refuses a bad signature.
    fake_obs_server.add_fault(
        status=403, code="SignatureDoesNotMatch", method="PUT", query=r"partNumber=2\b"
    )
    options = TransferOptions(part_size=MiB, multipart_threshold=MiB, jobs=1)
    with pytest.raises(StorageAuthError):
        sync_dir(obs_store, src, DEST, options=options, cache_dir=cache_dir)
    assert obs_store.list_multipart_uploads(FAKE_BUCKET, "") == []
    assert obs_store.head(FAKE_BUCKET, "jobs/code/weights.bin") is None
    assert (cache_dir / "uploads.json").read_text() == "{}"  # no record left to resume


def test_complete_whose_answer_was_lost_is_recognised(
    tmp_path: Path, obs_store: ObsObjectStore
) -> None:
    path = tmp_path / "w.bin"
    data = os.urandom(300 * 1024)
    path.write_bytes(data)
    key = "jobs/code/w.bin"
    mpu = obs_store.create_multipart(FAKE_BUCKET, key)
    parts = [
        obs_store.upload_part(FAKE_BUCKET, mpu, 1, path, 0, 200 * 1024),
        obs_store.upload_part(FAKE_BUCKET, mpu, 2, path, 200 * 1024, 100 * 1024),
    ]
    obs_store.complete_multipart(FAKE_BUCKET, mpu, parts)  # done, but say the answer was lost
    local = LocalFile("w.bin", path, len(data), hashlib.md5(data).hexdigest())
    plan = plan_sync(tmp_path, [local], DEST, [])
    uploader = Uploader(obs_store, plan, records=UploadRecords(tmp_path / "u.json"))
    info = uploader._complete(plan.uploads[0], mpu, parts)  # the retry finds no upload
    assert info.etag == multipart_etag(parts) and info.size == len(data)
    with pytest.raises(StorageNotFound):  # other parts: not this object, the error stands
        uploader._complete(plan.uploads[0], mpu, parts[:1])


def test_download_refuses_a_listing_with_a_file_and_a_dir_of_one_name(
    tmp_path: Path, fake_obs_server: FakeObsServer, obs_store: ObsObjectStore
) -> None:
    obs_store.put_bytes(FAKE_BUCKET, "clash/model", b"file")
    obs_store.put_bytes(FAKE_BUCKET, "clash/model/weights.bin", b"file below it")
    with pytest.raises(StorageIntegrityError, match="cannot both be files"):
        download_tree(obs_store, ObsUri(FAKE_BUCKET, "clash/"), tmp_path / "out")
    assert not (tmp_path / "out").exists()

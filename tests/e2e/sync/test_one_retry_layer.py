"""One retry rule in one layer: under a server that keeps failing, an object costs at most
``retries + 1`` requests (counted in the fake's request log), not one per layer; and only the
SDK's and the network's failures become ``StorageError``s."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer
from majob.errors import StorageError, StorageUnreachable
from majob.masking import MaskedException
from majob.storage import obs
from majob.storage.download import download_tree
from majob.storage.obs import ObsObjectStore
from majob.storage.sync import sync_dir
from majob.storage.transfer import TransferOptions
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET, obs_config

DEST = ObsUri(FAKE_BUCKET, "jobs/code/")
RETRIES = 2


@pytest.fixture
def store(fake_obs_server: FakeObsServer) -> ObsObjectStore:
    return ObsObjectStore(obs_config(fake_obs_server.endpoint, retries=RETRIES))


def _requests(server: FakeObsServer, method: str, path: str) -> int:
    return sum(1 for e in server.log.entries() if e.method == method and e.path == path)


def test_a_failing_put_costs_retries_plus_one_requests(
    tmp_path: Path, fake_obs_server: FakeObsServer, store: ObsObjectStore, cache_dir: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_text("a\n")
    fake_obs_server.add_fault(status=503, method="PUT", path=r"/jobs/code/a\.txt$")
    try:
        with pytest.raises(StorageError) as info:
            sync_dir(store, src, DEST, options=TransferOptions(jobs=1), cache_dir=cache_dir)
    finally:
        store.close()
    assert info.value.status == 503
    assert _requests(fake_obs_server, "PUT", f"/{FAKE_BUCKET}/jobs/code/a.txt") == RETRIES + 1


def test_a_failing_listing_and_download_cost_retries_plus_one_requests(
    tmp_path: Path, fake_obs_server: FakeObsServer, store: ObsObjectStore
) -> None:
    store.put_bytes(FAKE_BUCKET, "jobs/code/a.txt", b"a\n")
    fake_obs_server.add_fault(status=503, method="GET", path=r"/jobs/code/a\.txt$")
    try:
        with pytest.raises(StorageError):
            download_tree(store, DEST, tmp_path / "out", jobs=1)
        assert _requests(fake_obs_server, "GET", f"/{FAKE_BUCKET}/jobs/code/a.txt") == RETRIES + 1
        fake_obs_server.faults.clear()
        fake_obs_server.log.clear()
        fake_obs_server.add_fault(status=503, code="SlowDown", method="GET", path=r"^/[^/]+/?$")
        with pytest.raises(StorageError):
            download_tree(store, DEST, tmp_path / "out", jobs=1)
        assert _requests(fake_obs_server, "GET", f"/{FAKE_BUCKET}") == RETRIES + 1
    finally:
        store.close()


def test_a_bug_in_majob_is_not_a_storage_error(
    store: ObsObjectStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store.put_bytes(FAKE_BUCKET, "k", b"data")

    def broken(*args: Any) -> object:
        conn = args[-1]  # the SDK's connection: the answer is read, then majob's code fails
        if hasattr(conn, "getresponse"):
            conn.getresponse().close()
        raise KeyError("a bug in majob's streaming code")

    # Both readers of a GET answer: majob's own (ObsWire, V4 stores) and the SDK path's.
    monkeypatch.setattr(obs, "receive_answer", broken)
    monkeypatch.setattr(obs, "receive_to_file", broken)
    try:
        with pytest.raises(KeyError, match="streaming"):
            store.get_file(FAKE_BUCKET, "k", tmp_path / "k")
    finally:
        store.close()


def test_a_network_failure_keeps_its_cause_for_debugging(monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    store = ObsObjectStore(obs_config(f"http://127.0.0.1:{port}", retries=0))
    try:
        with pytest.raises(StorageUnreachable) as info:
            store.head(FAKE_BUCKET, "k")
    finally:
        store.close()
    # The cause is a masked copy of the SDK's exception (it may quote a secret): its type, its
    # message and its frames, for MAJOB_DEBUG=1.
    assert is_masked_refusal(info.value.__cause__)

    monkeypatch.setenv("MAJOB_OBS_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("MAJOB_OBS_RETRIES", "0")
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", DEFAULT_ACCESS_KEY)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", DEFAULT_SECRET_KEY)
    monkeypatch.setenv("MAJOB_DEBUG", "1")
    result = CliRunner().invoke(app, ["obs", "ls", f"obs://{FAKE_BUCKET}/"])
    assert isinstance(result.exception, StorageUnreachable)
    assert is_masked_refusal(result.exception.__cause__)


def is_masked_refusal(cause: BaseException | None) -> bool:
    return (
        isinstance(cause, MaskedException)
        and str(cause).startswith("builtins.ConnectionRefusedError: ")
        and cause.__traceback__ is not None
    )

"""Listings: keys with control characters round-trip (``encoding-type=url``), and a listing majob
cannot read is one clear error line, never a raw exception."""

from __future__ import annotations

from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer
from majob.errors import StorageError
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET, obs_config
from tests.loopback import serving_handler

runner = CliRunner()
ODD_KEYS = ["odd/a\x01b.txt", "odd/nul\x00.txt", "odd/plus+ space%25.txt", "odd/tab\t.txt"]

# What a broken server (or the fake before it escaped keys) sends: a raw control character,
# which makes the XML unparsable; and a listing whose Contents has no Key.
RAW_CONTROL = (
    '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name>'
    "<IsTruncated>false</IsTruncated><Contents><Key>a\x01b</Key><Size>1</Size>"
    "<ETag>&quot;0cc175b9c0f1b6a831c399e269772661&quot;</ETag></Contents></ListBucketResult>"
)
NOT_XML = "this is not a listing"
TRUNCATED_WITHOUT_MARKER = (
    '<?xml version="1.0" encoding="UTF-8"?><ListBucketResult><Name>b</Name>'
    "<IsTruncated>true</IsTruncated></ListBucketResult>"
)


@pytest.fixture
def odd_objects(obs_store: ObsObjectStore) -> list[str]:
    for key in ODD_KEYS:
        obs_store.put_bytes(FAKE_BUCKET, key, key.encode())
    return ODD_KEYS


def test_control_character_keys_round_trip_in_the_store(
    odd_objects: list[str], obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    fake_obs_server.log.clear()
    assert sorted(o.key for o in obs_store.list_all(FAKE_BUCKET, "odd/")) == sorted(odd_objects)
    assert all("encoding-type=url" in e.query for e in fake_obs_server.log.entries())


def test_ls_and_cp_r_handle_control_character_keys(
    odd_objects: list[str], obs_env: dict[str, str], tmp_path: Path
) -> None:
    listed = runner.invoke(app, ["obs", "ls", "-r", f"obs://{FAKE_BUCKET}/odd/"])
    assert listed.exit_code == 0, listed.output
    # Printed escaped (as ls -b does): a control character never reaches the terminal.
    assert "odd/plus+ space%25.txt" in listed.stdout and "odd/a\\x01b.txt" in listed.stdout
    for key in [k for k in odd_objects if "\x00" not in k]:
        got = runner.invoke(app, ["obs", "cp", f"obs://{FAKE_BUCKET}/{key}", str(tmp_path) + "/"])
        assert got.exit_code == 0, got.output
        assert (tmp_path / key.removeprefix("odd/")).read_bytes() == key.encode()
    copied = runner.invoke(app, ["obs", "cp", "-r", f"obs://{FAKE_BUCKET}/odd/", str(tmp_path)])
    # The NUL key is read correctly, and a NUL cannot be in a file name: one clear refusal.
    assert copied.exit_code != 0
    assert "Traceback" not in copied.output and "AttributeError" not in copied.output
    assert copied.stderr.startswith("error: refusing to download key 'odd/nul\\x00.txt'")


class _Broken(BaseHTTPRequestHandler):
    body = NOT_XML

    def do_GET(self) -> None:
        data = self.body.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "application/xml")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, format: str, *args: object) -> None:
        pass  # quiet: pytest shows stderr of failures only


@pytest.fixture(params=[RAW_CONTROL, NOT_XML, TRUNCATED_WITHOUT_MARKER])
def broken_endpoint(request: pytest.FixtureRequest) -> Iterator[str]:
    with serving_handler(type("Handler", (_Broken,), {"body": request.param})) as endpoint:
        yield endpoint


def test_unreadable_listing_is_a_storage_error(broken_endpoint: str) -> None:
    store = ObsObjectStore(obs_config(broken_endpoint, retries=0))
    try:
        with pytest.raises(StorageError, match="list objects: OBS sent a listing") as info:
            store.list_page(FAKE_BUCKET, "a/")
    finally:
        store.close()
    assert info.value.bucket == FAKE_BUCKET


def test_unreadable_listing_on_the_cli_is_one_line(
    broken_endpoint: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("MAJOB_OBS_ENDPOINT", broken_endpoint)
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", DEFAULT_ACCESS_KEY)
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", DEFAULT_SECRET_KEY)
    monkeypatch.setenv("MAJOB_OBS_RETRIES", "0")
    monkeypatch.delenv("MAJOB_DEBUG", raising=False)
    for command in (
        ["obs", "ls", f"obs://{FAKE_BUCKET}/a/"],
        ["obs", "cp", "-r", f"obs://{FAKE_BUCKET}/a/", str(tmp_path / "out")],
    ):
        result = runner.invoke(app, command)
        assert result.exit_code != 0
        assert result.stderr.startswith("error: list objects: OBS sent a listing"), result.output
        assert "Traceback" not in result.output

"""``majob obs rm``, ``rm -r`` and ``sync --delete`` on keys XML 1.0 cannot carry: every object
goes, or the command fails naming (escaped) the key that is still there.

Real client (esdk-obs-python) against the fake OBS, through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.obs import FakeObsServer
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

runner = CliRunner()
HOSTILE = ["h/soh\x01.txt", "h/esc\x1b[31m.txt", "h/nul\x00.txt", "h/cr\r.txt", "h/plain.txt"]


@pytest.fixture
def hostile(obs_store: ObsObjectStore) -> list[str]:
    for key in HOSTILE:
        obs_store.put_bytes(FAKE_BUCKET, key, b"x")
    return HOSTILE


def _keys(store: ObsObjectStore, prefix: str = "") -> list[str]:
    return sorted(o.key for o in store.list_all(FAKE_BUCKET, prefix))


def test_rm_removes_each_key(
    hostile: list[str], obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    for key in hostile:
        result = runner.invoke(app, ["obs", "rm", f"obs://{FAKE_BUCKET}/{key}", "--yes"])
        assert result.exit_code == 0, result.output
        assert key not in _keys(obs_store)
    assert _keys(obs_store) == []


def test_rm_r_removes_every_key(
    hostile: list[str], obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    result = runner.invoke(app, ["obs", "rm", "-r", f"obs://{FAKE_BUCKET}/h/", "--yes"])
    assert result.exit_code == 0, result.output
    assert "removed 5 objects" in result.stdout
    assert _keys(obs_store) == []


def test_sync_delete_removes_every_extraneous_key(
    hostile: list[str], obs_env: dict[str, str], obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "kept.txt").write_text("k")
    result = runner.invoke(app, ["obs", "sync", str(src), f"obs://{FAKE_BUCKET}/h/", "--delete"])
    assert result.exit_code == 0, result.output
    assert _keys(obs_store) == ["h/kept.txt"]


def test_a_key_that_stays_is_named_and_the_exit_is_not_0(
    hostile: list[str],
    obs_env: dict[str, str],
    obs_store: ObsObjectStore,
    fake_obs_server: FakeObsServer,
) -> None:
    fake_obs_server.add_fault(status=403, code="AccessDenied", method="DELETE", path="esc")
    result = runner.invoke(app, ["obs", "rm", "-r", f"obs://{FAKE_BUCKET}/h/", "--yes"])
    assert result.exit_code != 0
    assert "object=obs://majob-test/h/esc\\x1b[31m.txt" in result.stderr
    assert "\x1b" not in result.output
    assert "h/esc\x1b[31m.txt" in _keys(obs_store)

"""``majob obs ls|cp|sync|rm`` through Typer's runner, the real OBS client and the fake."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.obs import FakeObsServer
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

runner = CliRunner()
PREFIX = f"obs://{FAKE_BUCKET}/jobs/code/"


@pytest.fixture
def src(tmp_path: Path) -> Path:
    root = tmp_path / "src"
    (root / "model").mkdir(parents=True)
    (root / "train.py").write_text("print('hi')\n")
    (root / "model" / "net.py").write_text("net = 1\n")
    (root / ".env").write_text("TOKEN=x\n")
    (root / "notes.md").write_text("n\n")
    return root


def _keys(store: ObsObjectStore, prefix: str = "jobs/code/") -> list[str]:
    return sorted(o.key for o in store.list_all(FAKE_BUCKET, prefix))


def test_sync_dry_run_then_sync_then_no_change(
    src: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    dry = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--dry-run", "--exclude", "*.md"])
    assert dry.exit_code == 0, dry.output
    assert "upload       2 files" in dry.stdout and "dry run" in dry.stdout
    assert dry.stderr.splitlines() == [
        "left out of the upload 1 file that may hold secrets: .env (--allow-secrets, "
        "or a '!.env' line in .majobignore, keeps them)"
    ]
    assert _keys(obs_store) == []

    done = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--exclude", "*.md", "-j", "2"])
    assert done.exit_code == 0, done.output
    assert "uploaded 2 files" in done.stdout
    assert _keys(obs_store) == ["jobs/code/model/net.py", "jobs/code/train.py"]

    allowed = runner.invoke(
        app, ["obs", "sync", str(src), PREFIX, "--exclude", "*.md", "--allow-secrets"]
    )
    assert allowed.exit_code == 0, allowed.output
    assert "warning: uploading 1 file that may hold secrets: .env" in allowed.stderr
    assert _keys(obs_store) == ["jobs/code/.env", "jobs/code/model/net.py", "jobs/code/train.py"]

    (src / ".env").unlink()
    again = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--exclude", "*.md"])
    assert "skip         2 files" in again.stdout and "not in source; --delete" in again.stdout
    assert "uploaded 0 files" in again.stdout
    deleted = runner.invoke(app, ["obs", "sync", str(src), PREFIX, "--exclude", "*.md", "--delete"])
    assert "deleted 1" in deleted.stdout
    assert _keys(obs_store) == ["jobs/code/model/net.py", "jobs/code/train.py"]


def test_ls_cp_and_rm(
    src: Path, tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    copied = runner.invoke(app, ["obs", "cp", "-r", str(src), PREFIX])
    assert copied.exit_code == 0 and "left out of the upload 1 file" in copied.stderr
    assert "jobs/code/.env" not in _keys(obs_store)
    up = runner.invoke(app, ["obs", "cp", str(src / "train.py"), f"obs://{FAKE_BUCKET}/one/"])
    assert (
        up.exit_code == 0 and obs_store.get_bytes(FAKE_BUCKET, "one/train.py") == b"print('hi')\n"
    )
    renamed = runner.invoke(
        app, ["obs", "cp", str(src / "train.py"), f"obs://{FAKE_BUCKET}/one/renamed.py"]
    )
    assert renamed.exit_code == 0 and "one/renamed.py" in _keys(obs_store, "one/")

    listing = runner.invoke(app, ["obs", "ls", PREFIX])
    assert listing.exit_code == 0
    assert "DIR  jobs/code/model/" in listing.stdout and "jobs/code/train.py" in listing.stdout
    assert "net.py" not in listing.stdout
    assert "jobs/code/model/net.py" in runner.invoke(app, ["obs", "ls", "-r", PREFIX]).stdout

    out = tmp_path / "out"
    down = runner.invoke(app, ["obs", "cp", "-r", PREFIX, str(out)])
    assert down.exit_code == 0, down.output
    assert (out / "model" / "net.py").read_text() == "net = 1\n"
    single = tmp_path / "single"
    single.mkdir()
    got = runner.invoke(app, ["obs", "cp", PREFIX + "train.py", str(single)])
    assert got.exit_code == 0 and (single / "train.py").read_text() == "print('hi')\n"
    fresh = tmp_path / "fresh"  # "fresh/" names a directory that does not exist yet
    got = runner.invoke(app, ["obs", "cp", PREFIX + "train.py", f"{fresh}/"])
    assert got.exit_code == 0 and (fresh / "train.py").read_text() == "print('hi')\n"
    blocked = runner.invoke(app, ["obs", "cp", "-r", PREFIX, str(src / "train.py")])
    assert blocked.exit_code == 2 and "cannot write" in blocked.stderr

    refused = runner.invoke(app, ["obs", "rm", "-r", PREFIX])
    assert refused.exit_code == 2 and "pass --yes" in refused.stderr
    assert len(_keys(obs_store)) == 3
    removed = runner.invoke(app, ["obs", "rm", "-r", PREFIX, "--yes"])
    assert removed.exit_code == 0 and "removed 3 objects" in removed.stdout
    assert _keys(obs_store) == []
    missing = runner.invoke(app, ["obs", "rm", PREFIX + "nothing.py", "--yes"])
    assert missing.exit_code == 1 and "NoSuchKey" in missing.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["cp", "a", "b"], "between a local path and OBS"),
        (["cp", "{src}", PREFIX], "is a directory"),
        (["cp", PREFIX, "{tmp}"], "is a folder"),
        (["sync", "{tmp}/nope", PREFIX], "is not a directory"),
        (["ls", "s3://bucket/x"], "scheme 's3' is not 'obs'"),
        (["rm", f"obs://{FAKE_BUCKET}", "--yes"], "is a bucket, not an object"),
    ],
)
def test_bad_input_is_one_error_line_exit_2(
    args: list[str], message: str, src: Path, tmp_path: Path, obs_env: dict[str, str]
) -> None:
    argv = [a.format(src=src, tmp=tmp_path) for a in args]
    result = runner.invoke(app, ["obs", *argv])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("error: ") and message in result.stderr
    assert "Traceback" not in result.output


def test_wrong_key_and_unreachable_are_clear_errors(
    src: Path,
    obs_env: dict[str, str],
    fake_obs_server: FakeObsServer,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", "wrong-secret-value-42")
    denied = runner.invoke(app, ["obs", "sync", str(src), PREFIX])
    assert denied.exit_code == 1
    assert "code=SignatureDoesNotMatch" in denied.stderr
    assert "wrong-secret-value-42" not in denied.output
    assert fake_obs_server.log.count("PUT") == 0

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    monkeypatch.setenv("MAJOB_OBS_TIMEOUT", "2")
    down = runner.invoke(app, ["obs", "ls", PREFIX, "--endpoint", f"http://127.0.0.1:{port}"])
    assert down.exit_code == 1 and "connection refused" in down.stderr


def test_real_process_prints_one_error_and_no_secret(
    tmp_path: Path, obs_env: dict[str, str]
) -> None:
    env = {**os.environ, "HUAWEICLOUD_SDK_SK": "very-secret-sk-123"}
    done = subprocess.run(
        [sys.executable, "-m", "majob", "obs", "ls", PREFIX],
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 1
    assert done.stderr.startswith("error: list objects: ")
    assert "Traceback" not in done.stderr and "very-secret-sk-123" not in done.stderr
    assert done.stdout == ""

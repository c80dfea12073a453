"""``majob obs cp -r`` checks every target name before it writes anything: a key with a path
segment the local file system cannot hold, a local file where a directory must go, a file name
that is not UTF-8 or makes a key over OBS's 1024 bytes. Nothing is written half-way.

Real client (esdk-obs-python) against the fake OBS, through the CLI."""

from __future__ import annotations

import os
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

runner = CliRunner()
PREFIX = f"obs://{FAKE_BUCKET}/p/"


def _put_tree(store: ObsObjectStore, *odd: str) -> None:
    for i in range(12):
        store.put_bytes(FAKE_BUCKET, f"p/f{i:02d}.txt", b"x")
    for key in odd:
        store.put_bytes(FAKE_BUCKET, key, b"x")


def _uploaded(store: ObsObjectStore) -> list[str]:
    return [o.key for o in store.list_all(FAKE_BUCKET, "up/")]


def test_a_segment_too_long_for_the_file_system_writes_nothing(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    _put_tree(obs_store, "p/sub/" + "a" * 1015)
    result = runner.invoke(app, ["obs", "cp", "-r", PREFIX, str(tmp_path / "down")])
    assert result.exit_code == 2, result.output
    assert "a path segment of 1015 bytes" in result.stderr
    assert "p/sub/aaaa" in result.stderr and len(result.stderr.splitlines()[0]) < 400
    assert not (tmp_path / "down").exists()


def test_a_local_file_where_a_directory_must_go_writes_nothing(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    _put_tree(obs_store, "p/taken/inside.txt")
    down = tmp_path / "down"
    down.mkdir()
    (down / "taken").write_text("a file, not a directory")
    result = runner.invoke(app, ["obs", "cp", "-r", PREFIX, str(down)])
    assert result.exit_code == 2, result.output
    assert "taken" in result.stderr and "not a directory" in result.stderr
    assert sorted(os.listdir(down)) == ["taken"]


def test_a_long_name_the_file_system_holds_downloads(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    name = "n" * 250  # its temporary name must stay within the file system's 255 bytes too
    obs_store.put_bytes(FAKE_BUCKET, f"p/{name}", b"x")
    one = runner.invoke(app, ["obs", "cp", f"{PREFIX}{name}", f"{tmp_path}/"])
    assert one.exit_code == 0, one.output
    tree = runner.invoke(app, ["obs", "cp", "-r", PREFIX, str(tmp_path / "tree")])
    assert tree.exit_code == 0, tree.output
    assert (tmp_path / name).read_bytes() == (tmp_path / "tree" / name).read_bytes() == b"x"


def test_a_file_name_that_is_not_utf8_uploads_nothing(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    src = tmp_path / "src"
    src.mkdir()
    for i in range(12):
        (src / f"f{i:02d}.txt").write_text("x")
    os.close(os.open(os.fsencode(src) + b"/bad\xff.txt", os.O_CREAT | os.O_WRONLY))
    result = runner.invoke(app, ["obs", "cp", "-r", str(src), f"obs://{FAKE_BUCKET}/up/"])
    assert result.exit_code == 2, result.output
    assert "bad\\udcff.txt" in result.stderr and "not UTF-8" in result.stderr
    assert _uploaded(obs_store) == []


def test_a_key_over_1024_bytes_uploads_nothing(
    obs_store: ObsObjectStore, obs_env: dict[str, str], tmp_path: Path
) -> None:
    src = tmp_path / "src"
    deep = src.joinpath(*["d" * 250] * 5)
    deep.mkdir(parents=True)
    (deep / "deep.txt").write_text("x")
    for i in range(12):
        (src / f"f{i:02d}.txt").write_text("x")
    result = runner.invoke(app, ["obs", "cp", "-r", str(src), f"obs://{FAKE_BUCKET}/up/"])
    assert result.exit_code == 2, result.output
    assert "1024" in result.stderr and "deep.txt" in result.stderr
    assert _uploaded(obs_store) == []

"""Keys and file names are printed with control characters escaped (as ``ls -b`` does): an ESC
sequence in a key never reaches the terminal, a ``\\n`` never splits a key over two lines.

Real client (esdk-obs-python) against the fake OBS, through the CLI."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

runner = CliRunner()
PREFIX = f"obs://{FAKE_BUCKET}/esc/"
# A key that would clear the screen and one that would print a fake second line.
HOSTILE = {
    "esc/clear\x1b[2J\x1b[H.txt": "esc/clear\\x1b[2J\\x1b[H.txt",
    "esc/two\nlines.txt": "esc/two\\nlines.txt",
    "esc/dir\x07/bell.txt": "esc/dir\\x07/bell.txt",
}
# Not a file name majob downloads (a backslash), but listed: doubled, so no escape is forged.
LISTED_ONLY = {"esc/back\\slash\r.txt": "esc/back\\\\slash\\r.txt"}


@pytest.fixture
def hostile_keys(obs_store: ObsObjectStore) -> dict[str, str]:
    for key in HOSTILE:
        obs_store.put_bytes(FAKE_BUCKET, key, b"x")
    return HOSTILE


def _assert_clean(output: str) -> None:
    assert not any(c in output for c in "\x1b\x07\r"), repr(output)


def test_ls_escapes_keys_and_folders(
    hostile_keys: dict[str, str], obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    for key in LISTED_ONLY:
        obs_store.put_bytes(FAKE_BUCKET, key, b"x")
    shown = {**hostile_keys, **LISTED_ONLY}
    listed = runner.invoke(app, ["obs", "ls", "-r", PREFIX])
    assert listed.exit_code == 0, listed.output
    _assert_clean(listed.stdout)
    lines = listed.stdout.splitlines()
    assert len(lines) == len(shown)  # one line per key: none split by its \n
    assert sorted(line.split(maxsplit=1)[1] for line in lines) == sorted(shown.values())
    folders = runner.invoke(app, ["obs", "ls", PREFIX])
    assert "esc/dir\\x07/" in folders.stdout
    _assert_clean(folders.stdout)


def test_cp_escapes_what_it_names(
    hostile_keys: dict[str, str], obs_env: dict[str, str], tmp_path: Path
) -> None:
    one = runner.invoke(
        app, ["obs", "cp", f"obs://{FAKE_BUCKET}/esc/two\nlines.txt", f"{tmp_path}/"]
    )
    assert one.exit_code == 0, one.output
    assert (tmp_path / "two\nlines.txt").read_bytes() == b"x"
    assert len(one.stdout.splitlines()) == 1 and "two\\nlines.txt" in one.stdout
    down = runner.invoke(app, ["obs", "cp", "-r", PREFIX, str(tmp_path / "down")])
    assert down.exit_code == 0, down.output
    assert (tmp_path / "down" / "clear\x1b[2J\x1b[H.txt").exists()
    up = runner.invoke(app, ["obs", "cp", "-r", str(tmp_path / "down"), f"obs://{FAKE_BUCKET}/up/"])
    assert up.exit_code == 0, up.output
    for result in (one, down, up):
        _assert_clean(result.output)


def test_sync_plans_escape_file_names(obs_env: dict[str, str], tmp_path: Path) -> None:
    src = tmp_path / "src"
    src.mkdir()
    (src / "evil\x1b]0;title\x07.py").write_text("x")
    (src / "split\nname.py").write_text("y")
    (src / "id_rsa\x1b[31m").write_text("KEY")  # looks like a secret: named as left out
    plan = runner.invoke(app, ["obs", "sync", str(src), f"obs://{FAKE_BUCKET}/s/", "--dry-run"])
    assert plan.exit_code == 0, plan.output
    _assert_clean(plan.output)
    assert "evil\\x1b]0;title\\x07.py" in plan.stdout and "split\\nname.py" in plan.stdout
    assert "id_rsa\\x1b[31m" in plan.stderr

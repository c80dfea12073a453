"""``obs://B/x`` names the folder ``x/`` and the object ``x``, never a key that merely starts with
``x`` (``xy/``, ``x.txt``, ``x y/``): ``majob obs rm|ls|cp|sync`` as a user types them.

Real client (esdk-obs-python) against the fake OBS, through the CLI. Folder names with spaces,
unicode, ``%`` (also a literal ``%2F``) and ``+``: each is sent URL-encoded and read back
decoded, where a client that encodes one way and matches another would get it wrong.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

runner = CliRunner()
NAMES = ["awk", "with space", "ünï/cödé", "50%", "a%2Fb", "plus+sign"]


def _in_folder(name: str) -> list[str]:
    """The keys of folder ``name/``: files, a subfolder, a subfolder's marker only."""
    return [f"{name}/a.txt", f"{name}/sub/b.txt", f"{name}/empty/"]


def _alike(name: str) -> list[str]:
    """Keys that start with ``name`` and are in neither the object ``name`` nor ``name/``."""
    return [f"{name}x/sibling", f"{name}.txt", f"{name} y/z", f"{name}-old/kept/"]


def _seed(store: ObsObjectStore, name: str, *, exact: bool = True) -> None:
    keys = _in_folder(name) + _alike(name) + ([name] if exact else [])
    for key in keys:
        store.put_bytes(FAKE_BUCKET, key, b"" if key.endswith("/") else key.encode())


def _keys(store: ObsObjectStore) -> list[str]:
    return sorted(o.key for o in store.list_all(FAKE_BUCKET, ""))


def _obs(key: str) -> str:
    return f"obs://{FAKE_BUCKET}/{key}"


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


@pytest.mark.parametrize("name", NAMES)
def test_rm_r_removes_the_folder_and_the_object_and_spares_keys_alike(
    name: str, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, name)
    result = runner.invoke(app, ["obs", "rm", "-r", "-y", _obs(name)])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"removed 4 objects: {_obs(name)} and 3 objects in {_obs(name)}/\n"
    assert _keys(obs_store) == sorted(_alike(name))


@pytest.mark.parametrize("name", NAMES)
def test_rm_r_of_the_folder_with_a_slash_spares_the_object(
    name: str, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, name)
    result = runner.invoke(app, ["obs", "rm", "-r", "-y", _obs(name + "/")])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"removed 3 objects: 3 objects in {_obs(name)}/\n"
    assert _keys(obs_store) == sorted([*_alike(name), name])


def test_rm_r_asks_naming_the_object_and_the_folder(
    obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    refused = runner.invoke(app, ["obs", "rm", "-r", _obs("awk")])  # stdin is not a terminal
    assert refused.exit_code == 2
    assert refused.stderr.splitlines()[0] == (
        f"error: refusing to remove {_obs('awk')} and 3 objects in {_obs('awk')}/ without "
        "confirmation"
    )
    assert len(_keys(obs_store)) == 8


def test_rm_r_of_nothing_says_what_it_looked_for(
    obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    result = runner.invoke(app, ["obs", "rm", "-r", "-y", _obs("aw")])
    assert result.exit_code == 0, result.output
    assert (
        result.stdout == f"nothing to remove: nothing in {_obs('aw')}/ and no object {_obs('aw')}\n"
    )
    assert len(_keys(obs_store)) == 8


@pytest.mark.parametrize("name", NAMES)
def test_rm_of_a_folder_marker_removes_the_marker_alone(
    name: str, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, name)
    result = runner.invoke(app, ["obs", "rm", "-y", _obs(f"{name}/empty/")])
    assert result.exit_code == 0, result.output
    assert result.stdout == f"removed 1 object: the folder marker {_obs(name)}/empty/\n"
    assert f"{name}/empty/" not in _keys(obs_store)
    assert len(_keys(obs_store)) == 7
    # A folder whose only object is its marker is an empty folder, not "no such object".
    gone = runner.invoke(app, ["obs", "rm", "-y", _obs(f"{name}/empty/")])
    assert gone.exit_code == 1 and "NoSuchKey" in gone.stderr


@pytest.mark.parametrize(
    ("key", "message", "hint"),
    [
        ("awk/", "obs://majob-test/awk/ is a folder with objects in it (e.g. awk/a.txt), not an object",
         "pass --recursive (-r) to remove the folder and everything in it"),
        ("awk/sub", "obs://majob-test/awk/sub is a folder with objects in it (e.g. awk/sub/b.txt), not an object",
         "pass --recursive (-r) to remove the folder and everything in it"),
        ("awk/empty", "obs://majob-test/awk/empty is an empty folder: its marker object is obs://majob-test/awk/empty/",
         "`majob obs rm obs://majob-test/awk/empty/` removes the marker"),
        ("tree/", "obs://majob-test/tree/ is a folder with objects in it (e.g. tree/inner/), not an object",
         "pass --recursive (-r) to remove the folder and everything in it"),
        ("", "obs://majob-test/ is a bucket, not an object",
         "pass --recursive (-r) to remove every object in it"),
    ],
)  # fmt: skip
def test_rm_without_r_refuses_a_folder_and_removes_nothing(
    key: str, message: str, hint: str, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    # Markers only, the folder's and one below it: a tree of empty folders is still a tree.
    obs_store.put_bytes(FAKE_BUCKET, "tree/", b"")
    obs_store.put_bytes(FAKE_BUCKET, "tree/inner/", b"")
    before = _keys(obs_store)
    result = runner.invoke(app, ["obs", "rm", "-y", _obs(key)])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [f"error: {message}", f"error: hint: {hint}"]
    assert _keys(obs_store) == before


def test_rm_of_an_object_named_like_a_folder_removes_that_object(
    obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    result = runner.invoke(app, ["obs", "rm", "-y", _obs("awk")])
    assert result.exit_code == 0 and result.stdout == f"removed 1 object: {_obs('awk')}\n"
    assert "awk" not in _keys(obs_store) and len(_keys(obs_store)) == 7


@pytest.mark.parametrize("name", NAMES)
def test_ls_lists_the_object_and_the_folder_and_nothing_alike(
    name: str, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, name)
    size = len(name.encode())
    listed = runner.invoke(app, ["obs", "ls", _obs(name)])
    assert listed.exit_code == 0, listed.output
    assert [line.split(maxsplit=1) for line in listed.stdout.splitlines()] == [
        [str(size), name],
        [str(size + 6), f"{name}/a.txt"],
        ["DIR", f"{name}/empty/"],
        ["DIR", f"{name}/sub/"],
    ]
    deep = runner.invoke(app, ["obs", "ls", "-r", _obs(name)])
    assert deep.exit_code == 0, deep.output
    assert [line.split(maxsplit=1)[1] for line in deep.stdout.splitlines()] == [
        name,
        *sorted(_in_folder(name)),
    ]
    folder = runner.invoke(app, ["obs", "ls", "-r", _obs(name + "/")])
    assert [line.split(maxsplit=1)[1] for line in folder.stdout.splitlines()] == sorted(
        _in_folder(name)
    )


def test_ls_of_a_folder_that_holds_only_its_marker_is_empty(
    obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    for uri in (_obs("awk/empty"), _obs("awk/empty/")):
        result = runner.invoke(app, ["obs", "ls", uri])
        assert result.exit_code == 0 and result.stdout == "", result.output
    assert runner.invoke(app, ["obs", "ls", "-r", _obs("awk/empty/")]).stdout.split() == [
        "0",
        "awk/empty/",
    ]
    missing = runner.invoke(app, ["obs", "ls", _obs("aw")])  # awk*, but no aw nor aw/
    assert missing.exit_code == 1 and "NoSuchKey" in missing.stderr


@pytest.mark.parametrize("name", NAMES)
def test_cp_r_downloads_the_folder_and_nothing_alike(
    name: str, tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, name, exact=False)
    for uri, out in ((_obs(name), tmp_path / "bare"), (_obs(name + "/"), tmp_path / "slash")):
        result = runner.invoke(app, ["obs", "cp", "-r", uri, str(out)])
        assert result.exit_code == 0, result.output
        assert result.stdout.startswith("downloaded 2 files")
        assert _files(out) == ["a.txt", "sub/b.txt"]
        assert (out / "a.txt").read_bytes() == f"{name}/a.txt".encode()


def test_cp_r_of_both_an_object_and_a_folder_asks_which(
    tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    out = tmp_path / "out"
    both = runner.invoke(app, ["obs", "cp", "-r", _obs("awk"), str(out)])
    assert both.exit_code == 2, both.output
    assert both.stderr.splitlines() == [
        f"error: {_obs('awk')} names both an object and a folder with files in it (e.g. awk/a.txt)",
        f"error: hint: copy the folder with {_obs('awk')}/, or the object without -r",
    ]
    assert not out.exists()
    one = runner.invoke(app, ["obs", "cp", _obs("awk"), str(out)])
    assert one.exit_code == 0 and out.read_bytes() == b"awk"


def test_cp_r_of_an_object_alone_copies_that_object(
    tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk")
    obs_store.put_bytes(FAKE_BUCKET, "marked", b"m")
    obs_store.put_bytes(FAKE_BUCKET, "marked/", b"")  # an empty folder beside it: no files
    (tmp_path / "into").mkdir()
    for key in ("awk.txt", "marked"):
        result = runner.invoke(app, ["obs", "cp", "-r", _obs(key), str(tmp_path / "into")])
        assert result.exit_code == 0, result.output
    assert _files(tmp_path / "into") == ["awk.txt", "marked"]


def test_cp_of_a_folder_without_r_says_pass_r(
    tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk", exact=False)
    result = runner.invoke(app, ["obs", "cp", _obs("awk"), str(tmp_path / "out")])
    assert result.exit_code == 2, result.output
    assert result.stderr.splitlines() == [
        f"error: {_obs('awk')} is a folder with objects in it (e.g. awk/a.txt), not an object",
        "error: hint: pass --recursive (-r) to copy the folder",
    ]
    missing = runner.invoke(app, ["obs", "cp", _obs("aw"), str(tmp_path / "out")])
    assert missing.exit_code == 1 and "NoSuchKey" in missing.stderr
    assert not (tmp_path / "out").exists()


def test_cp_of_a_file_to_an_existing_folder_puts_it_in_the_folder(
    tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, "awk", exact=False)
    obs_store.put_bytes(FAKE_BUCKET, "empty/", b"")
    model = tmp_path / "model.pt"
    model.write_bytes(b"weights")
    for uri in (_obs("awk"), _obs("empty"), _obs("new-name")):
        result = runner.invoke(app, ["obs", "cp", str(model), uri])
        assert result.exit_code == 0, result.output
    keys = _keys(obs_store)
    assert {"awk/model.pt", "empty/model.pt", "new-name"} <= set(keys)
    assert "awk" not in keys and "empty" not in keys


@pytest.mark.parametrize("name", NAMES)
def test_sync_delete_touches_the_folder_only(
    name: str, tmp_path: Path, obs_env: dict[str, str], obs_store: ObsObjectStore
) -> None:
    _seed(obs_store, name)
    src = tmp_path / "src"
    src.mkdir()
    (src / "a.txt").write_bytes(f"{name}/a.txt".encode())
    result = runner.invoke(app, ["obs", "sync", str(src), _obs(name), "--delete"])
    assert result.exit_code == 0, result.output
    assert "deleted 1" in result.stdout  # name/sub/b.txt; folder markers are not files
    assert _keys(obs_store) == sorted([name, f"{name}/a.txt", f"{name}/empty/", *_alike(name)])

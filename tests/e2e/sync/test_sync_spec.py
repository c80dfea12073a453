"""``majob sync SPEC`` sends exactly what ``majob submit`` sends: the same function, the same keys."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore

BUCKET = "majob-demo"
PREFIX = "tiny/code/"
runner = CliRunner()

SPEC = """\
name: tiny
code:
  dir: code
  boot_file: train.py
  obs: "obs://majob-demo/tiny/code/"
  ignore: ["*.log", "scratch/"]
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u, nodes: 1}
outputs:
  - {name: train_url, obs: "obs://majob-demo/tiny/out/"}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    code = root / "code"
    (code / "pkg").mkdir(parents=True)
    (code / "scratch").mkdir()
    (code / "train.py").write_text("print('done', flush=True)\n")
    (code / "pkg" / "net.py").write_text("net = 1\n")
    (code / "run.log").write_text("code.ignore leaves this out\n")
    (code / "scratch" / "notes.txt").write_text("and this\n")
    (code / "cache.bin").write_text(".gitignore leaves this out\n")
    (code / ".gitignore").write_text("cache.bin\n")
    (code / ".env").write_text("TOKEN=x\n")  # a likely secret: never sent by default
    (root / "spec.yaml").write_text(SPEC)
    return root


def _keys(store: ObsObjectStore) -> set[str]:
    return {o.key for o in store.list_all(BUCKET, PREFIX)}


def _clear(store: ObsObjectStore) -> None:
    keys = sorted(_keys(store))
    if keys:
        store.delete_many(BUCKET, keys)


def test_sync_and_submit_upload_the_same_keys(project: Path, store: ObsObjectStore) -> None:
    spec = str(project / "spec.yaml")
    dry = runner.invoke(app, ["sync", spec, "--profile", "emulator", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert "dry run: nothing uploaded or deleted" in dry.stdout and _keys(store) == set()

    synced = runner.invoke(app, ["sync", spec, "--profile", "emulator"])
    assert synced.exit_code == 0, synced.output
    expected = {PREFIX + "train.py", PREFIX + "pkg/net.py", PREFIX + ".gitignore"}
    assert _keys(store) == expected
    again = runner.invoke(app, ["sync", spec, "--profile", "emulator"])
    assert again.exit_code == 0 and "uploaded 0 files" in again.stdout, again.output

    _clear(store)
    submitted = runner.invoke(app, ["submit", spec, "--profile", "emulator"])
    assert submitted.exit_code == 0, submitted.output
    assert _keys(store) == expected


def test_code_obs_at_a_bucket_root_is_one_clear_line(project: Path, store: ObsObjectStore) -> None:
    # Mirroring deletes what is not in the code: never at the root of a bucket.
    spec = project / "spec.yaml"
    spec.write_text(SPEC.replace("obs://majob-demo/tiny/code/", "obs://majob-demo/"))
    result = runner.invoke(app, ["sync", str(spec), "--profile", "emulator"])
    assert result.exit_code != 0
    assert result.stderr.startswith("error: code.obs is the root of bucket"), result.output


def test_sync_deletes_under_code_obs_only(project: Path, store: ObsObjectStore) -> None:
    # Keys that start like code.obs but are not in its folder: another version's code, the
    # folder's name as an object, a neighbour with a space. The sync mirrors tiny/code/ only.
    neighbours = ["tiny/code", "tiny/code-old/train.py", "tiny/codex/x", "tiny/code y/z"]
    for key in [*neighbours, PREFIX + "stale.py"]:
        store.put_bytes(BUCKET, key, b"x")
    synced = runner.invoke(app, ["sync", str(project / "spec.yaml"), "--profile", "emulator"])
    assert synced.exit_code == 0, synced.output
    assert PREFIX + "stale.py" not in _keys(store)
    left = {o.key for o in store.list_all(BUCKET, "tiny/")} - _keys(store)
    assert left == set(neighbours)

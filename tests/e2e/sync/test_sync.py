"""Sync through the real OBS client: plan, apply, ignore rules, --delete, no-change cost."""

from __future__ import annotations

import hashlib
import io
import os
from pathlib import Path

import pytest
from rich.console import Console

from majob.emulator.obs import FakeObsServer
from majob.errors import CompileError, UserInputError
from majob.service.code import sync_code
from majob.spec.load import load_spec
from majob.storage.localstate import HashCache, file_multipart_etag
from majob.storage.obs import ObsObjectStore
from majob.storage.sync import sync_dir
from majob.storage.transfer import TransferOptions
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET

DEST = ObsUri(FAKE_BUCKET, "jobs/code/")
OLD_NS = 1_600_000_000 * 10**9  # an mtime long past: hashes of the file are cached


def _tree(root: Path, files: dict[str, bytes]) -> None:
    for rel, data in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)


def _remote(store: ObsObjectStore, prefix: str = DEST.key) -> dict[str, str]:
    return {o.key[len(prefix) :]: o.etag for o in store.list_all(FAKE_BUCKET, prefix)}


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def test_ignore_rules_changes_and_delete(tmp_path: Path, obs_store: ObsObjectStore) -> None:
    src = tmp_path / "src"
    _tree(
        src,
        {
            "train.py": b"print('train')\n",
            "model/net.py": b"class Net: ...\n",
            "model/__pycache__/net.cpython-311.pyc": b"\0",
            "data/big.npy": b"\1" * 100,
            "runs/log.txt": b"log",
            "ckpt/last.ckpt": b"w",
            ".gitignore": b"data/\n*.ckpt\n",
            ".majobignore": b"runs/\n",
        },
    )
    plan, result = sync_dir(obs_store, src, DEST, ignore=["ckpt/"])
    assert result is not None and result.uploaded == 4
    assert set(_remote(obs_store)) == {"train.py", "model/net.py", ".gitignore", ".majobignore"}
    assert _remote(obs_store)["train.py"] == _md5(b"print('train')\n")

    # One changed, one new, one removed locally; an extraneous object stays without --delete.
    (src / "train.py").write_bytes(b"print('v2')\n")
    (src / "model" / "extra.py").write_bytes(b"x = 1\n")
    (src / "model" / "net.py").unlink()
    plan, result = sync_dir(obs_store, src, DEST, ignore=["ckpt/"])
    assert sorted((u.file.rel, u.reason) for u in plan.uploads) == [
        ("model/extra.py", "new"),
        ("train.py", "changed"),
    ]
    assert [o.key for o in plan.extraneous] == ["jobs/code/model/net.py"]
    assert result is not None and result.deleted == 0
    assert "model/net.py" in _remote(obs_store)

    plan, result = sync_dir(obs_store, src, DEST, ignore=["ckpt/"], delete=True)
    assert plan.uploads == () and result is not None and result.deleted == 1
    assert "model/net.py" not in _remote(obs_store)
    assert _remote(obs_store)["train.py"] == _md5(b"print('v2')\n")


def test_dry_run_moves_nothing(
    tmp_path: Path, obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    _tree(tmp_path / "src", {"a.py": b"a", ".env": b"TOKEN=1"})
    plan, result = sync_dir(obs_store, tmp_path / "src", DEST, dry_run=True)
    assert result is None
    assert len(plan.uploads) == 1 and plan.withheld == (".env",) and plan.secrets == ()
    assert _remote(obs_store) == {}
    assert fake_obs_server.log.count("PUT") == 0


def test_multipart_upload_is_compared_by_its_etag_even_without_a_cache(
    tmp_path: Path, obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    data = os.urandom(2 * 1024 * 1024 + 123)
    _tree(tmp_path / "src", {"weights.bin": data})
    weights = tmp_path / "src" / "weights.bin"
    os.utime(weights, ns=(OLD_NS, OLD_NS))  # old enough for the hash cache to keep
    options = TransferOptions(multipart_threshold=1 << 20, part_size=512 * 1024, jobs=3)
    _, result = sync_dir(
        obs_store, tmp_path / "src", DEST, options=options, cache_dir=tmp_path / "a"
    )
    assert result is not None and result.uploaded == 1
    info = obs_store.head(FAKE_BUCKET, "jobs/code/weights.bin")
    assert info is not None and info.etag.endswith("-5") and info.size == len(data)
    assert info.etag == file_multipart_etag(weights, 512 * 1024)
    assert info.metadata["md5-part-size"] == str(512 * 1024)
    assert "md5" not in info.metadata  # not known before the upload: the file was read once
    assert obs_store.get_bytes(FAKE_BUCKET, "jobs/code/weights.bin") == data
    parts = [e for e in fake_obs_server.log.entries() if "partNumber" in e.query]
    assert len(parts) == 5 and all(e.status == 200 for e in parts)

    for cache in ("a", "fresh"):  # the cache of the upload, then a machine that never saw it
        fake_obs_server.log.clear()
        hashes = HashCache.for_root(tmp_path / "src", tmp_path / cache)
        read_before = hashes.hashed
        plan, result = sync_dir(
            obs_store, tmp_path / "src", DEST, options=options, cache_dir=tmp_path / cache
        )
        assert plan.is_noop and result is not None and result.uploaded == 0
        assert fake_obs_server.log.count("PUT") == 0 and fake_obs_server.log.count("POST") == 0
        assert read_before == 0
    warm = HashCache.for_root(tmp_path / "src", tmp_path / "a")
    assert warm.known_multipart_etag("weights.bin", os.stat(weights), 512 * 1024) == info.etag

    # Same size, other bytes: the ETag the file makes now differs, so it is sent again.
    changed = bytearray(data)
    changed[-1] ^= 0xFF
    weights.write_bytes(bytes(changed))
    plan, result = sync_dir(
        obs_store, tmp_path / "src", DEST, options=options, cache_dir=tmp_path / "a"
    )
    assert [u.reason for u in plan.uploads] == ["changed"]
    assert obs_store.get_bytes(FAKE_BUCKET, "jobs/code/weights.bin") == bytes(changed)


def test_multipart_upload_stores_the_md5_when_the_cache_knows_it(
    tmp_path: Path, obs_store: ObsObjectStore
) -> None:
    data = os.urandom(1024 * 1024 + 5)
    _tree(tmp_path / "src", {"w.bin": data})
    path = tmp_path / "src" / "w.bin"
    os.utime(path, ns=(OLD_NS, OLD_NS))
    cache = HashCache.for_root(tmp_path / "src", tmp_path / "c")
    cache.md5("w.bin", path, os.stat(path))
    cache.save()
    options = TransferOptions(multipart_threshold=1 << 20, part_size=512 * 1024, jobs=2)
    sync_dir(obs_store, tmp_path / "src", DEST, options=options, cache_dir=tmp_path / "c")
    info = obs_store.head(FAKE_BUCKET, "jobs/code/w.bin")
    assert info is not None and info.metadata["md5"] == _md5(data)
    assert info.metadata["md5-part-size"] == str(512 * 1024)


def test_sync_code_uses_the_spec(tmp_path: Path, obs_store: ObsObjectStore) -> None:
    _tree(tmp_path / "code", {"train.py": b"pass\n", "notes.md": b"n", "cache/x": b"x"})
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(
        "name: demo\n"
        "code:\n"
        "  dir: code\n"
        "  boot_file: train.py\n"
        f"  obs: obs://{FAKE_BUCKET}/jobs/demo/code/\n"
        "  ignore: ['*.md', 'cache/']\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}\n"
        "resources: {flavor: modelarts.vm.cpu.8u}\n"
    )
    spec = load_spec(spec_file)
    obs_store.put_bytes(FAKE_BUCKET, "jobs/demo/code/stale.py", b"old")
    _, result = sync_code(spec, obs_store)
    assert result is not None
    assert set(_remote(obs_store, "jobs/demo/code/")) == {"train.py"}

    no_obs = spec.model_copy(update={"code": spec.code.model_copy(update={"obs": None})})
    with pytest.raises(CompileError, match=r"code\.obs"):
        sync_code(no_obs, obs_store)
    root = ObsUri(FAKE_BUCKET, "")
    at_root = spec.model_copy(update={"code": spec.code.model_copy(update={"obs": root})})
    with pytest.raises(UserInputError, match="root of bucket"):
        sync_code(at_root, obs_store)
    assert "jobs/demo/code/train.py" in {o.key for o in obs_store.list_all(FAKE_BUCKET, "")}


def test_progress_bar_on_a_terminal_only(tmp_path: Path, obs_store: ObsObjectStore) -> None:
    _tree(tmp_path / "src", {f"f{i}.txt": b"x" * i for i in range(5)})
    shown = io.StringIO()
    console = Console(file=shown, force_terminal=True, width=120)
    sync_dir(obs_store, tmp_path / "src", DEST, options=TransferOptions(jobs=2), console=console)
    assert "files" in shown.getvalue() and "5/5" in shown.getvalue()

    (tmp_path / "src" / "new.txt").write_text("n")
    quiet = io.StringIO()
    sync_dir(obs_store, tmp_path / "src", DEST, console=Console(file=quiet))  # not a terminal
    assert quiet.getvalue() == ""


@pytest.mark.slow
def test_two_thousand_files_under_faults_then_no_change_lists_twice(
    tmp_path: Path, obs_store: ObsObjectStore, fake_obs_server: FakeObsServer
) -> None:
    src = tmp_path / "src"
    files = {f"d{i % 20:02d}/f{i:04d}.txt": f"file {i}\n".encode() * 3 for i in range(2000)}
    _tree(src, files)
    # 10% of requests fail: 5% with a 503, 5% with a connection reset in the middle of a body.
    fake_obs_server.add_fault(status=503, probability=0.05)
    fake_obs_server.add_fault(reset=True, probability=0.05)
    _, result = sync_dir(obs_store, src, DEST, options=TransferOptions(jobs=16))
    faults = [e for e in fake_obs_server.log.entries() if e.fault]
    assert len(faults) > 100  # the faults really fired
    assert result is not None and result.uploaded == 2000

    fake_obs_server.faults.clear()
    remote = _remote(obs_store)
    assert remote == {rel: _md5(data) for rel, data in files.items()}
    stored = fake_obs_server.backend.bucket(FAKE_BUCKET).objects
    assert all(stored[DEST.key + rel].blob.md5.hex() == _md5(d) for rel, d in files.items())

    fake_obs_server.log.clear()
    plan, result = sync_dir(obs_store, src, DEST)
    assert plan.is_noop and len(plan.skipped) == 2000
    entries = fake_obs_server.log.entries()
    assert [e.method for e in entries if e.method != "GET"] == []
    object_lists = [e for e in entries if "uploads" not in e.query]
    assert len(object_lists) == 2  # 2,000 keys in pages of 1,000
    assert len(entries) == 3  # and one listing of unfinished multipart uploads: 1.5 per 1,000

"""The plan step: what is uploaded, skipped, deleted, and which names look like secrets."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from majob.storage.base import ObjectInfo
from majob.storage.localstate import HashCache
from majob.storage.plan import LocalFile, looks_secret, md5_of, plan_sync, scan_local
from majob.storage.uri import ObsUri

DEST = ObsUri.parse("obs://bkt/jobs/code/")


def _md5(data: bytes) -> str:
    return hashlib.md5(data).hexdigest()


def _local(rel: str, data: bytes) -> LocalFile:
    return LocalFile(rel, Path("/nowhere") / rel, len(data), _md5(data))


def test_new_changed_unchanged_and_extraneous() -> None:
    local = [_local("a.py", b"aaa"), _local("b.py", b"bbb"), _local("sub/c.py", b"c")]
    remote = [
        ObjectInfo("jobs/code/a.py", 3, f'"{_md5(b"aaa")}"'),  # same: skipped
        ObjectInfo("jobs/code/b.py", 3, _md5(b"xxx")),  # same size, other content
        ObjectInfo("jobs/code/old.py", 10, _md5(b"0123456789")),
        ObjectInfo("jobs/code/dir/", 0, _md5(b"")),  # a folder marker is not a file
        ObjectInfo("jobs/codex/a.py", 3, _md5(b"aaa")),  # another prefix
    ]
    plan = plan_sync(Path("/src"), local, DEST, remote)
    assert [(u.key, u.reason) for u in plan.uploads] == [
        ("jobs/code/b.py", "changed"),
        ("jobs/code/sub/c.py", "new"),
    ]
    assert [f.rel for f in plan.skipped] == ["a.py"]
    assert [o.key for o in plan.extraneous] == ["jobs/code/old.py"]
    assert plan.deletes == ()
    assert plan.upload_bytes == 4 and plan.skip_bytes == 3
    assert plan.summary_lines()[1:] == [
        "  upload       2 files          4 B  (1 new, 1 changed)",
        "  skip         1 file           3 B  (unchanged)",
        "  keep         1 object        10 B  (not in source; --delete)",
    ]


def test_delete_only_when_asked() -> None:
    remote = [ObjectInfo("jobs/code/old.py", 1, _md5(b"x"))]
    plan = plan_sync(Path("/src"), [], DEST, remote, delete=True)
    assert [o.key for o in plan.deletes] == ["jobs/code/old.py"]
    assert plan.delete_bytes == 1
    assert not plan.is_noop


def test_multipart_object_compared_by_stored_md5_via_head() -> None:
    data = b"z" * 100
    multipart = ObjectInfo("jobs/code/big.bin", 100, "0123456789abcdef0123456789abcdef-3")
    asked: list[str] = []

    def head(key: str) -> ObjectInfo:
        asked.append(key)
        return ObjectInfo(key, 100, multipart.etag, metadata={"md5": _md5(data)})

    plan = plan_sync(Path("/s"), [_local("big.bin", data)], DEST, [multipart], head=head)
    assert plan.is_noop and asked == ["jobs/code/big.bin"]

    stale = lambda key: ObjectInfo(key, 100, multipart.etag, metadata={"md5": _md5(b"q")})  # noqa: E731
    plan = plan_sync(Path("/s"), [_local("big.bin", data)], DEST, [multipart], head=stale)
    assert [u.reason for u in plan.uploads] == ["changed"]


def test_size_difference_needs_no_head() -> None:
    def head(key: str) -> ObjectInfo:
        raise AssertionError("a size mismatch must not cost a HEAD")

    remote = [ObjectInfo("jobs/code/f", 5, "abc-2")]
    plan = plan_sync(Path("/s"), [_local("f", b"x")], DEST, remote, head=head)
    assert [u.reason for u in plan.uploads] == ["changed"]


def test_md5_of_prefers_metadata_and_rejects_multipart_etags() -> None:
    hex_md5 = _md5(b"x")
    assert md5_of(ObjectInfo("k", 1, f'"{hex_md5.upper()}"')) == hex_md5
    assert md5_of(ObjectInfo("k", 1, "abc-2")) is None
    assert md5_of(ObjectInfo("k", 1, "abc-2", metadata={"md5": hex_md5})) == hex_md5


@pytest.mark.parametrize(
    ("rel", "secret"),
    [
        (".env", True),
        ("conf/.env.prod", True),
        ("keys/server.pem", True),
        ("id_rsa", True),
        ("home/id_ed25519.pub", True),
        ("aws/credentials", True),
        ("tls.key", True),
        (".netrc", True),
        ("train.py", False),
        ("environment.yaml", False),
        ("keyboard.py", False),
    ],
)
def test_secret_names(rel: str, secret: bool) -> None:
    assert looks_secret(rel) is secret


def test_scan_respects_ignore_rules_and_leaves_secrets_out(tmp_path: Path) -> None:
    (tmp_path / "sub").mkdir()
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / ".env").write_text("TOKEN=x\n")
    (tmp_path / "sub" / "data.bin").write_bytes(b"\0" * 10)
    (tmp_path / "sub" / "keep.txt").write_text("k")
    (tmp_path / "sub" / "id_rsa").write_text("KEY")
    (tmp_path / ".gitignore").write_text("*.bin\n")
    (tmp_path / "sub" / ".majobignore").write_text("keep.txt\n")
    (tmp_path / "notes.md").write_text("n")
    withheld: list[str] = []
    files = scan_local(tmp_path, ["*.md"], on_withheld=withheld.append)
    assert sorted(f.rel for f in files) == [".gitignore", "sub/.majobignore", "train.py"]
    assert withheld == [".env", "sub/id_rsa"]
    by_rel = {f.rel: f for f in files}
    assert by_rel["train.py"].md5 == _md5(b"print(1)\n")
    plan = plan_sync(tmp_path, files, DEST, [], withheld=withheld)
    assert plan.secrets == () and plan.withheld == (".env", "sub/id_rsa")
    assert plan.warning_lines() == [
        "left out of the upload 2 files that may hold secrets: .env, sub/id_rsa "
        "(--allow-secrets, or a '!.env' line in .majobignore, keeps them)"
    ]


def test_allow_secrets_uploads_them_with_a_warning(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print(1)\n")
    (tmp_path / "server.pem").write_text("PEM")
    files = scan_local(tmp_path, allow_secrets=True)
    assert sorted(f.rel for f in files) == ["server.pem", "train.py"]
    plan = plan_sync(tmp_path, files, DEST, [])
    assert plan.warning_lines() == ["warning: uploading 1 file that may hold secrets: server.pem"]


@pytest.mark.parametrize(
    ("rules", "extra", "kept"),
    [
        ({".majobignore": "!.env\n"}, [], [".env", "conf/.env"]),  # at any depth, as in git
        ({".majobignore": "!/.env\n"}, [], [".env"]),
        ({"conf/.majobignore": "!.env\n"}, [], ["conf/.env"]),
        ({}, ["!.env"], [".env", "conf/.env"]),
        ({}, ["!conf/.env"], ["conf/.env"]),
        # .gitignore says what git tracks, not what may go to the cloud.
        ({".gitignore": "!.env\n"}, [], []),
        # A later rule of majob's own that ignores it again wins.
        ({".majobignore": "!.env\n.env\n"}, [], []),
    ],
)
def test_an_explicit_unignore_of_majobs_own_lets_a_secret_in(
    tmp_path: Path, rules: dict[str, str], extra: list[str], kept: list[str]
) -> None:
    (tmp_path / "conf").mkdir()
    (tmp_path / ".env").write_text("A=1\n")
    (tmp_path / "conf" / ".env").write_text("B=2\n")
    for name, text in rules.items():
        (tmp_path / name).write_text(text)
    files = [f.rel for f in scan_local(tmp_path, extra)]
    assert [f for f in files if f.endswith(".env")] == kept


def test_scan_never_follows_symlinks_out_of_the_tree(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.txt").write_text("s")
    root = tmp_path / "root"
    root.mkdir()
    (root / "a.txt").write_text("a")
    os.symlink(outside / "secret.txt", root / "link.txt")
    os.symlink(outside, root / "linkdir")
    os.symlink(root / "a.txt", root / "inside.txt")
    assert sorted(f.rel for f in scan_local(root)) == ["a.txt", "inside.txt"]


def test_scan_uses_the_hash_cache(tmp_path: Path) -> None:
    root = tmp_path / "src"
    root.mkdir()
    for i in range(3):
        path = root / f"f{i}.txt"
        path.write_text(str(i))
        os.utime(path, ns=(10**18, 10**18))  # well in the past of no one: not "racy"
    cache_dir = tmp_path / "cache"
    first = HashCache.for_root(root, cache_dir)
    scan_local(root, cache=first)
    first.save()
    assert first.hashed == 3
    again = HashCache.for_root(root, cache_dir)
    files = scan_local(root, cache=again)
    assert again.hashed == 0
    assert {f.md5 for f in files} == {_md5(str(i).encode()) for i in range(3)}


class _Digests:
    """``ContentDigests`` over in-memory contents, counting what it was asked."""

    def __init__(self, contents: dict[str, bytes]) -> None:
        self.contents = contents
        self.asked: list[str] = []

    def md5(self, file: LocalFile) -> str:
        self.asked.append(f"md5 {file.rel}")
        return _md5(self.contents[file.rel])

    def multipart_etag(self, file: LocalFile, part_size: int) -> str:
        self.asked.append(f"etag {file.rel} {part_size}")
        data = self.contents[file.rel]
        parts = [data[i : i + part_size] for i in range(0, len(data), part_size)]
        joined = b"".join(hashlib.md5(p).digest() for p in parts)
        return f"{hashlib.md5(joined).hexdigest()}-{len(parts)}"


def test_unhashed_big_file_is_compared_by_the_etag_its_parts_make() -> None:
    data = bytes(range(256)) * 40
    digests = _Digests({"big.bin": data})
    etag = digests.multipart_etag(LocalFile("big.bin", Path("/s/big.bin"), len(data), None), 4096)
    local = [LocalFile("big.bin", Path("/s/big.bin"), len(data), None)]  # not hashed by the scan
    listed = ObjectInfo("jobs/code/big.bin", len(data), etag)
    head = lambda key: ObjectInfo(key, len(data), etag, metadata={"md5-part-size": "4096"})  # noqa: E731
    digests.asked.clear()

    plan = plan_sync(Path("/s"), local, DEST, [listed], head=head, digests=digests)
    assert plan.is_noop and digests.asked == ["etag big.bin 4096"]

    other = ObjectInfo("jobs/code/big.bin", len(data), "0" * 32 + "-3")
    meta = {"md5-part-size": "4096"}
    head_other = lambda key: ObjectInfo(key, len(data), other.etag, metadata=meta)  # noqa: E731
    plan = plan_sync(Path("/s"), local, DEST, [other], head=head_other, digests=digests)
    assert [u.reason for u in plan.uploads] == ["changed"]

    # Without digests (or without the part size) nothing tells the content: upload it.
    assert not plan_sync(Path("/s"), local, DEST, [listed], head=head).is_noop
    bare = lambda key: ObjectInfo(key, len(data), etag)  # noqa: E731
    assert not plan_sync(Path("/s"), local, DEST, [listed], head=bare, digests=digests).is_noop


def test_unhashed_big_file_is_hashed_only_against_a_same_size_md5() -> None:
    data = b"q" * 5000
    digests = _Digests({"big.bin": data})
    local = [LocalFile("big.bin", Path("/s/big.bin"), len(data), None)]
    single = ObjectInfo("jobs/code/big.bin", len(data), _md5(data))  # a single-PUT object
    assert plan_sync(Path("/s"), local, DEST, [single], digests=digests).is_noop
    assert digests.asked == ["md5 big.bin"]
    smaller = ObjectInfo("jobs/code/big.bin", 10, _md5(data))
    plan_sync(Path("/s"), local, DEST, [smaller], digests=digests)
    assert digests.asked == ["md5 big.bin"]  # a size difference reads nothing


def test_scan_leaves_big_files_unhashed(tmp_path: Path) -> None:
    (tmp_path / "small.txt").write_bytes(b"s")
    (tmp_path / "big.bin").write_bytes(b"b" * 100)
    files = {f.rel: f for f in scan_local(tmp_path, lazy_from=100)}
    assert files["small.txt"].md5 == _md5(b"s") and files["big.bin"].md5 is None

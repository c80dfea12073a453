"""The hash cache and the multipart upload records: keyed, atomic, robust to garbage."""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from majob.storage.dirs import default_cache_dir
from majob.storage.localstate import (
    HashCache,
    UploadRecord,
    UploadRecords,
    file_md5,
    file_multipart_etag,
    racy_mtime,
)

OLD_NS = 1_600_000_000 * 10**9
SECOND = 10**9


def _write(path: Path, data: bytes, mtime_ns: int = OLD_NS) -> os.stat_result:
    path.write_bytes(data)
    os.utime(path, ns=(mtime_ns, mtime_ns))
    return os.stat(path)


def test_cache_hit_and_invalidation_by_size_mtime_inode(tmp_path: Path) -> None:
    cache_file = tmp_path / "c.json"
    f = tmp_path / "f"
    cache = HashCache(cache_file)
    assert cache.md5("f", f, _write(f, b"one")) == hashlib.md5(b"one").hexdigest()
    cache.save()

    warm = HashCache(cache_file)
    warm.md5("f", f, os.stat(f))
    assert warm.hashed == 0

    # Same size, new mtime: re-hashed.
    changed = HashCache(cache_file)
    assert changed.md5("f", f, _write(f, b"two", OLD_NS + 1)) == hashlib.md5(b"two").hexdigest()
    assert changed.hashed == 1

    # Same size and mtime but another inode (file replaced): re-hashed.
    stale = HashCache(cache_file)
    f.unlink()
    assert stale.md5("f", f, _write(f, b"six", OLD_NS + 1)) == hashlib.md5(b"six").hexdigest()


def test_recently_modified_files_are_not_remembered(tmp_path: Path) -> None:
    cache_file = tmp_path / "c.json"
    f = tmp_path / "f"
    # Modified as it is hashed (a second ahead, so a slow machine cannot make it old): it could
    # change again within the same tick.
    _write(f, b"fresh", time.time_ns() + SECOND)
    cache = HashCache(cache_file)
    cache.md5("f", f, os.stat(f))
    cache.save()
    again = HashCache(cache_file)
    again.md5("f", f, os.stat(f))
    assert again.hashed == 1


@pytest.mark.parametrize(
    ("mtime_ns", "racy"),
    [
        # An mtime with a sub-second part: the file system ticks in ms; 100 ms later it is settled
        # (the sync right after a first one must not read every file just written again).
        (OLD_NS + 123_456_789, False),
        (OLD_NS + 2 * SECOND - 99_000_000, True),
        (OLD_NS + 2 * SECOND - 101_000_000, False),
        (OLD_NS + 3 * SECOND + 5, True),  # later than the hash: the clock of another machine
        # Whole seconds: a file system that keeps no more (FAT: 2 s), so 2 s.
        (OLD_NS + SECOND, True),
        (OLD_NS, False),
    ],
)
def test_racy_window_follows_the_file_systems_tick(mtime_ns: int, racy: bool) -> None:
    hashed_at = OLD_NS + 2 * SECOND
    assert racy_mtime(mtime_ns, hashed_at) is racy


def test_garbage_cache_file_is_ignored_and_replaced(tmp_path: Path) -> None:
    cache_file = tmp_path / "c.json"
    cache_file.write_text("{not json")
    f = tmp_path / "f"
    cache = HashCache(cache_file)
    cache.md5("f", f, _write(f, b"x"))
    cache.save()
    assert '"f"' in cache_file.read_text()
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]


def test_cache_per_root_under_the_cache_dir(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "mc"))
    assert default_cache_dir() == tmp_path / "mc"
    a = HashCache.for_root(tmp_path / "a")
    b = HashCache.for_root(tmp_path / "b")
    assert a.path is not None and b.path is not None and a.path != b.path
    assert a.path.parent == tmp_path / "mc" / "hashes"
    monkeypatch.delenv("MAJOB_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "majob"


def test_file_md5_reads_in_chunks(tmp_path: Path) -> None:
    data = os.urandom(3 * (1 << 20) + 7)
    (tmp_path / "big").write_bytes(data)
    assert file_md5(tmp_path / "big") == hashlib.md5(data).hexdigest()


def test_upload_records_round_trip_and_drop(tmp_path: Path) -> None:
    records = UploadRecords(tmp_path / "uploads.json")
    record = UploadRecord("bkt", "a/big.bin", "up-1", 10, "ab" * 16, 5)
    assert records.find("bkt", "a/big.bin") is None
    records.put(record)
    assert UploadRecords(tmp_path / "uploads.json").find("bkt", "a/big.bin") == record
    records.drop("bkt", "a/big.bin", "another-upload")  # names another upload: kept
    assert records.find("bkt", "a/big.bin") == record
    records.drop("bkt", "a/big.bin", "up-1")
    assert records.find("bkt", "a/big.bin") is None
    (tmp_path / "uploads.json").write_text('{"bkt/k": {"nonsense": 1}}')
    assert records.find("bkt", "k") is None


def test_multipart_etag_is_computed_once_and_kept_with_the_md5(tmp_path: Path) -> None:
    cache_file = tmp_path / "c.json"
    f = tmp_path / "f"
    data = os.urandom(2500)
    stat = _write(f, data)
    digests = b"".join(hashlib.md5(data[i : i + 1000]).digest() for i in (0, 1000, 2000))
    expected = f"{hashlib.md5(digests).hexdigest()}-3"
    assert file_multipart_etag(f, 1000) == expected

    cache = HashCache(cache_file)
    assert cache.known_multipart_etag("f", stat, 1000) is None
    assert cache.multipart_etag("f", f, stat, 1000) == expected
    assert cache.md5("f", f, stat) == hashlib.md5(data).hexdigest()
    assert cache.hashed == 2
    cache.save()

    warm = HashCache(cache_file)
    assert warm.known_md5("f", stat) == hashlib.md5(data).hexdigest()
    assert warm.multipart_etag("f", f, stat, 1000) == expected and warm.hashed == 0
    assert warm.known_multipart_etag("f", stat, 500) is None  # another part size: unknown
    changed = _write(f, data[::-1], OLD_NS + 1)
    assert warm.known_multipart_etag("f", changed, 1000) is None
    assert warm.known_md5("f", changed) is None


def test_a_recently_modified_file_is_not_remembered(tmp_path: Path) -> None:
    f = tmp_path / "f"
    stat = _write(f, b"fresh", time.time_ns() + SECOND)  # the same mtime could hide a change
    cache = HashCache(tmp_path / "c.json")
    cache.remember_multipart_etag("f", stat, 1000, "0" * 32 + "-1")
    assert cache.known_multipart_etag("f", stat, 1000) is None


def test_a_second_save_writes_only_what_changed_since_the_first(tmp_path: Path) -> None:
    # sync saves after the plan and again after the uploads: small files add nothing there.
    cache_file = tmp_path / "c.json"
    f = tmp_path / "f"
    stat = _write(f, b"data")
    cache = HashCache(cache_file)
    cache.md5("f", f, stat)
    cache.save()
    written = os.stat(cache_file).st_ino
    cache.save()
    assert os.stat(cache_file).st_ino == written  # not replaced: nothing new to say
    cache.remember_multipart_etag("f", stat, 1000, "0" * 32 + "-1")
    cache.save()
    assert os.stat(cache_file).st_ino != written
    assert HashCache(cache_file).known_multipart_etag("f", stat, 1000) == "0" * 32 + "-1"


def test_the_lock_excludes_another_holder_and_filelocks_users(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import filelock

    from majob.storage import localstate

    path = tmp_path / "hashes.json"
    monkeypatch.setattr(localstate, "LOCK_TIMEOUT", 0.05)
    with localstate._locked(path):
        # Another open of the lock file (another run) waits, then gives up ...
        with pytest.raises(TimeoutError), localstate._locked(path):
            pass
        # ... and so does a run that takes the lock with filelock (older majob versions).
        with pytest.raises(filelock.Timeout), filelock.FileLock(str(path) + ".lock", timeout=0):
            pass
    with filelock.FileLock(str(path) + ".lock", timeout=0):  # released on leaving
        pass
    with localstate._locked(path):
        pass

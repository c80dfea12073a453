"""A stage whose source holds a large object: fetched in ranged GETs, recorded with the digest
it was checked against, verified in full from disk, and resumed after SIGKILL mid-file."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from majob.data.manifest import read_manifest
from majob.data.stage_copy import stage_tree
from majob.emulator.obs import FakeObsServer
from majob.errors import DataStageError
from majob.storage.obs import ObsObjectStore
from majob.storage.ranged import Plan
from majob.storage.sync import sync_dir
from majob.storage.transfer import TransferOptions
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET

MiB = 1 << 20
SRC = ObsUri(FAKE_BUCKET, "data/big/")
KEY = SRC.key + "model.bin"


def _fill(store: ObsObjectStore, tmp_path: Path) -> bytes:
    """A 48 MiB multipart object (4 MiB parts: six 8 MiB pieces) and a small file beside it."""
    block = os.urandom(MiB)
    data = b"".join(i.to_bytes(8, "little") + block[8:] for i in range(48))
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.bin").write_bytes(data)
    (tmp_path / "src" / "small.txt").write_bytes(b"small")
    options = TransferOptions(multipart_threshold=16 * MiB, part_size=4 * MiB)
    sync_dir(store, tmp_path / "src", SRC, cache_dir=tmp_path / "cache", options=options)
    return data


def test_a_large_object_is_recorded_with_its_multipart_etag_and_verified_in_full(
    obs_store: ObsObjectStore, tmp_path: Path
) -> None:
    data = _fill(obs_store, tmp_path)
    dest = tmp_path / "vol"
    report = stage_tree(obs_store, SRC, dest)
    assert report.copied == 2 and (dest / "model.bin").read_bytes() == data
    manifest = read_manifest(dest)
    assert manifest is not None and manifest.state == "complete"
    record = manifest.files["model.bin"]
    assert record.part_size == 4 * MiB and record.md5 == record.etag and "-" in record.etag
    assert manifest.files["small.txt"].part_size is None
    assert stage_tree(obs_store, SRC, dest, full_verify=True).skipped
    # One byte changed on the share, size and mtime as they were: the full verify sees it.
    stat = os.stat(dest / "model.bin")
    with open(dest / "model.bin", "r+b") as handle:
        handle.seek(20 * MiB)
        handle.write(b"\x00" if data[20 * MiB] else b"\x01")
    os.utime(dest / "model.bin", ns=(stat.st_atime_ns, stat.st_mtime_ns))
    with pytest.raises(DataStageError, match=r"checksum differs: model\.bin"):
        stage_tree(obs_store, SRC, dest, full_verify=True)
    # As the failure's hint says, the next stage copies it again (in ranged GETs).
    report = stage_tree(obs_store, SRC, dest)
    assert (report.copied, report.kept) == (1, 1) and (dest / "model.bin").read_bytes() == data


STAGE = """
import sys
from pathlib import Path
from majob.data.stage_copy import stage_tree
from majob.errors import DataStageError
from majob.storage.obs import open_store
from majob.storage.uri import ObsUri
with open_store() as store:
    stage_tree(store, ObsUri.parse(sys.argv[1]), Path(sys.argv[2]))
"""


def _kill_mid_file(obs_env: dict[str, str], fake_obs_server: FakeObsServer, dest: Path) -> Path:
    """A stage killed (SIGKILL) in the middle of ``model.bin``'s ranged GETs; its journal."""
    # Each ranged GET waits a while: the first four pieces land, the other two are in flight.
    fake_obs_server.add_fault(latency=1.5, method="GET", path=KEY + "$")
    stage = subprocess.Popen(
        [sys.executable, "-c", STAGE, SRC.uri, str(dest)], env={**os.environ, **obs_env}
    )
    landed: list[str] = []
    deadline = time.monotonic() + 60
    while len(landed) < 3 and stage.poll() is None and time.monotonic() < deadline:
        landed = [
            line for journal in dest.glob(".model.bin.*.majob-ranged.json")
            for line in journal.read_text().splitlines()
        ]  # fmt: skip
        time.sleep(0.02)
    stage.send_signal(signal.SIGKILL)
    assert stage.wait() == -9
    assert not (dest / "model.bin").exists()
    fake_obs_server.faults.clear()
    (journal,) = dest.glob(".model.bin.*.majob-ranged.json")
    return journal


def test_a_stage_killed_in_the_middle_of_a_large_file_resumes_its_ranges(
    obs_store: ObsObjectStore,
    obs_env: dict[str, str],
    fake_obs_server: FakeObsServer,
    tmp_path: Path,
) -> None:
    data = _fill(obs_store, tmp_path)
    dest = tmp_path / "vol"
    journal = _kill_mid_file(obs_env, fake_obs_server, dest)
    pieces_landed = len(journal.read_text().splitlines()) - 1
    fake_obs_server.log.clear()
    report = stage_tree(obs_store, SRC, dest, full_verify=True)
    assert (dest / "model.bin").read_bytes() == data
    info = obs_store.head(FAKE_BUCKET, KEY)
    assert info is not None
    ranged = [
        e for e in fake_obs_server.log.entries() if e.method == "GET" and e.path.endswith(KEY)
    ]
    assert 0 < pieces_landed < len(Plan.of(info).spans())
    assert len(ranged) == len(Plan.of(info).spans()) - pieces_landed
    assert report.files == 2 and read_manifest(dest).state == "complete"  # type: ignore[union-attr]
    assert not list(dest.glob(".*majob-ranged*"))


@pytest.mark.parametrize("then", ["deleted", "shrunk"])
def test_the_leftovers_of_a_large_file_killed_half_way_go_when_its_object_went_or_changed(
    obs_store: ObsObjectStore,
    obs_env: dict[str, str],
    fake_obs_server: FakeObsServer,
    tmp_path: Path,
    then: str,
) -> None:
    _fill(obs_store, tmp_path)
    dest = tmp_path / "vol"
    _kill_mid_file(obs_env, fake_obs_server, dest)
    assert len(list(dest.glob(".model.bin.*.majob-ranged*"))) == 2  # the file and its journal
    # A user's file that only looks like majob's is data: kept, and reported as extra.
    (dest / ".model.bin.0123456789ab.majob-ranged").write_bytes(b"not majob's")
    if then == "deleted":
        obs_store.delete_many(FAKE_BUCKET, [KEY])
    else:  # now small: one GET, the ranged temporary file is not taken up again
        obs_store.put_bytes(FAKE_BUCKET, KEY, b"a small model")
    report = stage_tree(obs_store, SRC, dest)
    assert report.extra == [".model.bin.0123456789ab.majob-ranged"]
    left = sorted(p.name for p in dest.glob(".*majob-ranged*"))
    assert left == [".model.bin.0123456789ab.majob-ranged"]
    assert read_manifest(dest).state == "complete"  # type: ignore[union-attr]
    assert (dest / "model.bin").exists() == (then == "shrunk")
    assert stage_tree(obs_store, SRC, dest).skipped

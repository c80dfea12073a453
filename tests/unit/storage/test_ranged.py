"""Parallel ranged GETs of a large object (``storage.ranged``) against the fake OBS through the
real store: the bytes and the check, a failed range sent again, an object that changes between
ranges, a download killed half-way and resumed, a resumed piece that lies."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from majob.emulator.obs import FakeObsServer
from majob.errors import StorageIntegrityError
from majob.storage.obs import ObsObjectStore
from majob.storage.ranged import RANGED_MIN, Plan, _temp_name, get_file_ranged, is_temp_name
from majob.storage.sync import sync_dir
from majob.storage.transfer import TransferOptions
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET

MiB = 1 << 20
KEY = "big/model.bin"


def _data(size: int = RANGED_MIN + 8 * MiB) -> bytes:
    block = os.urandom(MiB)
    return b"".join(i.to_bytes(8, "little") + block[8:] for i in range(size // MiB))


def _multipart(store: ObsObjectStore, tmp_path: Path, data: bytes) -> None:
    """``data`` uploaded by majob's sync: a multipart object with ``md5-part-size``, no md5."""
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "model.bin").write_bytes(data)
    options = TransferOptions(multipart_threshold=16 * MiB, part_size=5 * MiB)  # 10 MiB pieces
    sync_dir(
        store,
        tmp_path / "src",
        ObsUri(FAKE_BUCKET, "big/"),
        cache_dir=tmp_path / "cache",
        options=options,
    )


def _ranged_gets(server: FakeObsServer) -> list[int]:
    return [e.status for e in server.log.entries() if e.method == "GET" and e.path.endswith(KEY)]


def _litter(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.startswith("."))


def test_a_multipart_object_lands_checked_by_its_parts(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    data = _data()
    _multipart(obs_store, tmp_path, data)
    info = obs_store.head(FAKE_BUCKET, KEY)
    assert info is not None and "-" in info.etag and "md5" not in info.metadata
    fake_obs_server.log.clear()
    target = tmp_path / "out" / "model.bin"
    target.parent.mkdir()
    got, checked = get_file_ranged(obs_store, FAKE_BUCKET, KEY, target)
    assert target.read_bytes() == data and checked == info.etag == got.etag
    assert _ranged_gets(fake_obs_server) == [206] * len(Plan.of(info).spans())
    assert Plan.of(info).piece == 10 * MiB and _litter(target.parent) == []  # two parts a piece


def test_a_single_put_object_is_checked_by_its_whole_md5(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    data = _data()
    obs_store.put_bytes(FAKE_BUCKET, KEY, data)
    fake_obs_server.log.clear()
    got, checked = get_file_ranged(obs_store, FAKE_BUCKET, KEY, tmp_path / "model.bin", streams=3)
    assert checked == hashlib.md5(data).hexdigest() == got.etag
    assert (tmp_path / "model.bin").read_bytes() == data
    assert _ranged_gets(fake_obs_server) == [206] * len(Plan.of(got).spans()) == [206] * 5


def test_a_range_that_fails_half_way_is_sent_again_alone(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    data = _data()
    _multipart(obs_store, tmp_path, data)
    pieces = len(Plan.of(obs_store.head(FAKE_BUCKET, KEY)).spans())  # type: ignore[arg-type]
    fake_obs_server.log.clear()
    fake_obs_server.add_fault(reset=True, method="GET", path=KEY, count=1)
    _, checked = get_file_ranged(obs_store, FAKE_BUCKET, KEY, tmp_path / "model.bin")
    assert checked is not None and (tmp_path / "model.bin").read_bytes() == data
    faults = [e for e in fake_obs_server.log.entries() if e.fault]
    assert len(faults) == 1 and len(_ranged_gets(fake_obs_server)) == pieces + 1


def test_an_object_changed_between_ranges_is_fetched_again_as_it_is_now(
    obs_store: ObsObjectStore, fake_obs_server: FakeObsServer, tmp_path: Path
) -> None:
    _multipart(obs_store, tmp_path, _data())
    newer = _data()

    def overwrite(index: int) -> None:
        if index == 0:
            obs_store.put_bytes(FAKE_BUCKET, KEY, newer)

    fake_obs_server.log.clear()
    target = tmp_path / "model.bin"
    got, checked = get_file_ranged(
        obs_store, FAKE_BUCKET, KEY, target, streams=1, on_piece=overwrite
    )
    assert 412 in _ranged_gets(fake_obs_server)  # If-Match refused the next range
    assert target.read_bytes() == newer and got.etag == checked == hashlib.md5(newer).hexdigest()
    assert _litter(tmp_path) == []


KILLER = """
import os, signal, sys
from pathlib import Path
from majob.storage.obs import open_store
from majob.storage.ranged import get_file_ranged
def on_piece(index):
    os.kill(os.getpid(), signal.SIGKILL)
with open_store() as store:
    get_file_ranged(store, sys.argv[1], sys.argv[2], Path(sys.argv[3]), streams=1,
                    on_piece=on_piece)
"""


def test_a_download_killed_half_way_fetches_only_the_missing_ranges(
    obs_store: ObsObjectStore,
    obs_env: dict[str, str],
    fake_obs_server: FakeObsServer,
    tmp_path: Path,
) -> None:
    data = _data()
    _multipart(obs_store, tmp_path, data)
    out = tmp_path / "out"
    out.mkdir()
    killed = subprocess.run(
        [sys.executable, "-c", KILLER, FAKE_BUCKET, KEY, str(out / "model.bin")],
        env={**os.environ, **obs_env},
    )
    assert killed.returncode == -9
    assert not (out / "model.bin").exists()  # a partly written file is never in place
    (journal,) = out.glob(".model.bin.*.majob-ranged.json")
    assert len(journal.read_text().splitlines()) == 2  # its head and the one piece that landed
    fake_obs_server.log.clear()
    _, checked = get_file_ranged(obs_store, FAKE_BUCKET, KEY, out / "model.bin")
    info = obs_store.head(FAKE_BUCKET, KEY)
    assert info is not None and checked == info.etag
    assert (out / "model.bin").read_bytes() == data
    assert len(_ranged_gets(fake_obs_server)) == len(Plan.of(info).spans()) - 1
    assert _litter(out) == []


def test_a_resumed_piece_whose_bytes_changed_on_disk_fails_the_check(
    obs_store: ObsObjectStore,
    obs_env: dict[str, str],
    tmp_path: Path,
) -> None:
    _multipart(obs_store, tmp_path, _data())
    out = tmp_path / "out"
    out.mkdir()
    subprocess.run(
        [sys.executable, "-c", KILLER, FAKE_BUCKET, KEY, str(out / "model.bin")],
        env={**os.environ, **obs_env},
    )
    (journal,) = out.glob(".model.bin.*.majob-ranged.json")
    temp = Path(str(journal).removesuffix(".json"))
    landed = json.loads(journal.read_text().splitlines()[1])["piece"]
    info = obs_store.head(FAKE_BUCKET, KEY)
    assert info is not None
    with open(temp, "r+b") as handle:  # one byte of the landed piece, flipped
        handle.seek(Plan.of(info).spans()[landed][0] + 5)
        byte = handle.read(1)
        handle.seek(-1, os.SEEK_CUR)
        handle.write(bytes([byte[0] ^ 0xFF]))
    with pytest.raises(StorageIntegrityError, match="multipart ETag"):
        get_file_ranged(obs_store, FAKE_BUCKET, KEY, out / "model.bin")
    assert _litter(out) == [] and not (out / "model.bin").exists()  # the next run starts over


@pytest.mark.parametrize(
    "name", ["model.bin", "a.b.c", "x" * 40, "y" * 41 + ".tar", "données.bin", "bad\udcff.bin"]
)
def test_the_temporary_names_are_told_by_their_exact_form(tmp_path: Path, name: str) -> None:
    temp = os.path.basename(_temp_name(tmp_path / name))
    assert is_temp_name(temp) and is_temp_name(temp + ".json")
    tag = temp.rsplit(".", 2)[1]
    other = "0" * 12 if tag != "0" * 12 else "1" * 12
    look_alikes = [
        temp[1:],  # no leading dot
        temp + ".tmp",
        temp.replace(".majob-ranged", ".majob-rangedx"),
        f".{name[:40]}.{tag[:11]}.majob-ranged",
        f".{name}.majob-ranged",
    ]
    if tag != tag.upper():
        look_alikes.append(temp.replace(tag, tag.upper()))
    if len(name) < 40:  # the hash of the whole name is checked; a cut name's cannot be
        look_alikes.append(temp.replace(tag, other))
    assert not [n for n in look_alikes if is_temp_name(n)]
    assert not is_temp_name("." + "z" * 41 + f".{tag}.majob-ranged")  # never cut to 41

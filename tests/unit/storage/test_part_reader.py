"""``PartReader``: one pass over a byte range, hashed on the way, through one reused buffer."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest

from majob.errors import StorageIntegrityError
from majob.storage.part_reader import PartReader


def test_reads_the_range_once_hashing_what_it_hands_out(tmp_path: Path) -> None:
    data = os.urandom(10_000)
    path = tmp_path / "f.bin"
    path.write_bytes(data)
    with PartReader(path, 1_000, 5_000, chunk=2_048) as reader:
        chunks = []
        while chunk := reader.read(4_096):
            chunks.append(bytes(chunk))
        assert [len(c) for c in chunks] == [2_048, 2_048, 904]  # never past the range
        assert reader.sent == 5_000 and reader.read() == b""
        assert reader.md5() == hashlib.md5(data[1_000:6_000]).hexdigest()
    assert b"".join(chunks) == data[1_000:6_000]


def test_chunks_are_views_of_one_buffer(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"a" * 100 + b"b" * 100)
    with PartReader(path, 0, 200, chunk=100) as reader:
        first = reader.read()
        assert bytes(first) == b"a" * 100
        second = reader.read()
        assert first.obj is second.obj  # no copy per chunk: the next read reuses the buffer
        assert bytes(first) == b"b" * 100


def test_a_file_shorter_than_the_range_is_an_integrity_error(tmp_path: Path) -> None:
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * 10)
    with PartReader(path, 5, 10) as reader:
        assert bytes(reader.read()) == b"x" * 5
        with pytest.raises(StorageIntegrityError, match="changed or went away"):
            reader.read()


def test_a_file_that_went_away_is_an_integrity_error(tmp_path: Path) -> None:
    with pytest.raises(StorageIntegrityError, match="changed or went away"):
        PartReader(tmp_path / "gone.bin", 0, 10)

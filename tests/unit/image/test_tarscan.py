from __future__ import annotations

import io
import os
import tarfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from majob.image.tarscan import TarDamaged, count_entries, count_stream_entries


def _archive(path: Path, fmt: int) -> int:
    """A tar with every kind of entry, long names and a pax size; returns tarfile's count."""
    with tarfile.open(path, "w", format=fmt) as tar:
        for name, kind, size in [
            ("dir", tarfile.DIRTYPE, 0),
            ("dir/" + "long-name-" * 15 + ".py", tarfile.REGTYPE, 700),
            ("dir/link", tarfile.SYMTYPE, 0),
            ("dir/hard", tarfile.LNKTYPE, 0),
            ("dir/fifo", tarfile.FIFOTYPE, 0),
            ("empty", tarfile.REGTYPE, 0),
            ("exact", tarfile.REGTYPE, 1024),
        ]:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.size = size
            if kind in (tarfile.SYMTYPE, tarfile.LNKTYPE):
                info.linkname = "target/" + "deep-" * 30  # long link names: GNU K / pax
            tar.addfile(info, io.BytesIO(b"x" * size) if size else None)
    with tarfile.open(path) as tar:
        return len(tar.getmembers())


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_counts_what_tarfile_counts(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "layer.tar"
    expected = _archive(path, fmt)
    # Inside a bigger file, at an offset, as a layer sits in an image tarball.
    padded = tmp_path / "outer.bin"
    padded.write_bytes(b"\xff" * 1536 + path.read_bytes() + b"\xee" * 512)
    fd = os.open(padded, os.O_RDONLY)
    try:
        assert count_entries(fd, 1536, path.stat().st_size) == expected == 7
    finally:
        os.close(fd)


@pytest.mark.parametrize("fmt", [tarfile.GNU_FORMAT, tarfile.PAX_FORMAT])
def test_a_stream_counts_as_the_file_does(tmp_path: Path, fmt: int) -> None:
    path = tmp_path / "layer.tar"
    expected = _archive(path, fmt)
    with path.open("rb") as stream:
        assert count_stream_entries(stream) == (path.stat().st_size, expected)


def test_a_size_past_the_end_is_refused_before_anything_is_read(tmp_path: Path) -> None:
    path = tmp_path / "layer.tar"
    with tarfile.open(path, "w", format=tarfile.USTAR_FORMAT) as tar:
        info = tarfile.TarInfo("./PaxHeaders/f")
        info.type = tarfile.XHDTYPE
        info.size = 10
        tar.addfile(info, io.BytesIO(b"10 size=1\n"))
    data = bytearray(path.read_bytes())
    data[124:136] = b"\x80" + (2**40).to_bytes(11, "big")  # a terabyte of pax records
    data[148:156] = b" " * 8
    data[148:156] = b"%06o\0 " % sum(data[:512])
    path.write_bytes(bytes(data))
    fd = os.open(path, os.O_RDONLY)
    try:
        with pytest.raises(TarDamaged, match="claims 1099511627776 bytes of records"):
            count_entries(fd, 0, len(data))
    finally:
        os.close(fd)
    with path.open("rb") as stream, pytest.raises(TarDamaged, match="claims 1099511627776"):
        count_stream_entries(stream)


def test_ustar_and_pax_size_override(tmp_path: Path) -> None:
    path = tmp_path / "layer.tar"
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        info = tarfile.TarInfo("big")
        info.size = 3000
        info.pax_headers = {"comment": "size=1 is not a record here"}
        tar.addfile(info, io.BytesIO(b"y" * 3000))
    fd = os.open(path, os.O_RDONLY)
    try:
        assert count_entries(fd, 0, path.stat().st_size) == 1
    finally:
        os.close(fd)


def test_truncated_and_garbage(tmp_path: Path) -> None:
    path = tmp_path / "layer.tar"
    _archive(path, tarfile.GNU_FORMAT)
    data = path.read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[:1800])
    garbage = tmp_path / "garbage.tar"
    garbage.write_bytes(b"not a tar header " * 64)
    for bad, message in [(cut, "cut short|runs past the end"), (garbage, "checksum|unreadable")]:
        fd = os.open(bad, os.O_RDONLY)
        try:
            with pytest.raises(TarDamaged, match=message):
                count_entries(fd, 0, bad.stat().st_size)
        finally:
            os.close(fd)


_entry = st.tuples(
    st.text(alphabet="abcdefghij/._-", min_size=1, max_size=180).filter(
        lambda n: not n.startswith("/") and n.strip("/.")
    ),
    st.sampled_from([tarfile.REGTYPE, tarfile.DIRTYPE, tarfile.SYMTYPE]),
    st.integers(min_value=0, max_value=3000),
)


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    entries=st.lists(_entry, max_size=12),
    fmt=st.sampled_from([tarfile.GNU_FORMAT, tarfile.PAX_FORMAT]),
)
def test_any_archive_counts_as_tarfile_counts(
    tmp_path: Path, entries: list[tuple[str, bytes, int]], fmt: int
) -> None:
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=fmt) as tar:
        for name, kind, size in entries:
            info = tarfile.TarInfo(name)
            info.type = kind
            info.size = size if kind == tarfile.REGTYPE else 0
            info.linkname = "t" * (size % 150) if kind == tarfile.SYMTYPE else ""
            tar.addfile(info, io.BytesIO(b"z" * info.size) if info.size else None)
    data = buffer.getvalue()
    path = tmp_path / "layer.tar"
    path.write_bytes(data)
    with tarfile.open(path) as tar:
        expected = len(tar.getmembers())
    fd = os.open(path, os.O_RDONLY)
    try:
        assert count_entries(fd, 0, len(data)) == expected == len(entries)
    finally:
        os.close(fd)

"""One layer of an image, measured without unpacking it: its compression found by its magic
bytes, then its entries counted as a stream (``tarscan.py``): an uncompressed layer in place,
header to header (no file content is read), a gzip or zstd layer through a streaming
decompressor. Memory stays flat whatever the size. bzip2 and xz layers are refused, and zstd
needs the ``zstandard`` package (``pip install 'majob[image]'``).
"""

from __future__ import annotations

import gzip
import tarfile
import zlib
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Protocol

from majob.image.archive import ImageTarError, error_line, member_name
from majob.image.tarscan import TarDamaged, count_entries, count_stream_entries

GZIP_MAGIC = b"\x1f\x8b"
ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"
_OTHER_MAGIC = {b"BZh": "bzip2", b"\xfd7zXZ\x00": "xz"}


@dataclass
class Layer:
    index: int  # 1-based, base layer first
    blob: str  # the member of the tarball holding the layer
    compression: str  # "none", "gzip" or "zstd"
    compressed_bytes: int
    uncompressed_bytes: int
    entries: int  # files, directories, links... every tar entry of the layer
    created_by: str | None  # the history entry that made the layer, when the config says


def read_layer(
    outer: tarfile.TarFile,
    fd: int,
    member: tarfile.TarInfo,
    number: int,
    created_by: str | None,
    path: Path,
) -> Layer:
    stream = outer.extractfile(member)
    assert stream is not None
    magic = stream.read(6)
    stream.seek(0)
    where = f"{path}: layer {number} ({member.name})"
    for prefix, name in _OTHER_MAGIC.items():
        if magic.startswith(prefix):
            raise ImageTarError(f"{where} is {name}-compressed, which majob does not read")
    try:
        if magic.startswith(GZIP_MAGIC):
            compression = "gzip"
            size, entries = count_stream_entries(gzip.GzipFile(fileobj=stream, mode="rb"))
        elif magic.startswith(ZSTD_MAGIC):
            compression = "zstd"
            size, entries = count_stream_entries(_zstd_reader(stream, where))
        else:
            compression = "none"
            # Read in place: headers only, content skipped (see tarscan.py).
            size = member.size
            entries = count_entries(fd, member.offset_data, member.size)
    except (tarfile.TarError, EOFError, OSError, zlib.error, TarDamaged) as error:
        raise ImageTarError(
            f"{where} is truncated or damaged ({error_line(error)})",
            hint="write the tarball again (docker save -o IMAGE.tar)",
        ) from None
    return Layer(
        index=number,
        blob=member_name(member.name),
        compression=compression,
        compressed_bytes=member.size,
        uncompressed_bytes=size,
        entries=entries,
        created_by=created_by,
    )


class _Readable(Protocol):
    def read(self, size: int = -1, /) -> bytes: ...


class _ZstdErrorsAsOSError:
    """zstandard's ``ZstdError`` (corrupt data) is no ``OSError``: say it as one, like gzip."""

    def __init__(self, reader: _Readable, error: type[Exception]) -> None:
        self.reader = reader
        self.error = error

    def read(self, size: int = -1, /) -> bytes:
        try:
            return self.reader.read(size)
        except self.error as error:
            raise OSError(f"zstd: {error}") from None


def _zstd_reader(stream: IO[bytes], where: str) -> _Readable:
    try:
        import zstandard
    except ImportError:
        raise ImageTarError(
            f"{where} is zstd-compressed and the zstandard package is not installed",
            hint="pip install 'majob[image]'",
        ) from None
    # zstd:chunked layers are many frames, one after the other: read them all.
    reader: _Readable = zstandard.ZstdDecompressor().stream_reader(stream, read_across_frames=True)
    return _ZstdErrorsAsOSError(reader, zstandard.ZstdError)

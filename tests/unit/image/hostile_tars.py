"""Hostile image tarballs for the tests: header fields rewritten (checksum made right again, so
the reader must check what the field says), a pax record that is not a number, an index that
names itself."""

from __future__ import annotations

import io
import json
import tarfile
from pathlib import Path

BLOCK = 512
SIZE_FIELD = slice(124, 136)
CHECKSUM_FIELD = slice(148, 156)


def fix_checksum(data: bytearray, header: int) -> None:
    """Recompute the checksum of the header block at byte ``header``, as a writer would."""
    data[header + CHECKSUM_FIELD.start : header + CHECKSUM_FIELD.stop] = b" " * 8
    total = sum(data[header : header + BLOCK])
    data[header + CHECKSUM_FIELD.start : header + CHECKSUM_FIELD.stop] = b"%06o\0 " % total


def set_size(data: bytearray, header: int, size: int) -> None:
    """Write ``size`` into the header at byte ``header`` (base-256, any size) and fix the sum."""
    data[header + SIZE_FIELD.start : header + SIZE_FIELD.stop] = b"\x80" + size.to_bytes(11, "big")
    fix_checksum(data, header)


def headers(data: bytes) -> list[int]:
    """Byte offsets of the header blocks of the tar ``data`` (as tarfile walks it)."""
    with tarfile.open(fileobj=io.BytesIO(data)) as tar:
        return [member.offset for member in tar.getmembers()]


def pax_layer(record: bytes) -> bytes:
    """A layer whose first entry is a pax extended header holding ``record``, then one file."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w", format=tarfile.USTAR_FORMAT) as tar:
        pax = tarfile.TarInfo("./PaxHeaders/f")
        pax.type = tarfile.XHDTYPE
        pax.size = len(record)
        tar.addfile(pax, io.BytesIO(record))
        file = tarfile.TarInfo("f")
        file.size = 1
        tar.addfile(file, io.BytesIO(b"x"))
    return buffer.getvalue()


def huge_pax_layer() -> bytes:
    """A layer whose pax header claims 2**40 bytes of records (the file holds a few)."""
    data = bytearray(pax_layer(b"10 size=1\n"))
    set_size(data, 0, 2**40)
    return bytes(data)


def self_index(path: Path) -> Path:
    """An OCI layout whose index lists, as a nested index, the blob holding the same index."""
    index = json.dumps(
        {
            "schemaVersion": 2,
            "manifests": [
                {"mediaType": "application/vnd.oci.image.index.v1+json", "digest": "sha256:ab"}
            ],
        }
    ).encode()
    with tarfile.open(path, "w") as tar:
        for name in ("index.json", "blobs/sha256/ab"):
            info = tarfile.TarInfo(name)
            info.size = len(index)
            tar.addfile(info, io.BytesIO(index))
    return path

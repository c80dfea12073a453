"""Count the entries of an uncompressed tar that sits inside a file, reading headers only.

Why not ``tarfile``: it builds a ``TarInfo`` per entry (about 30 µs each), which made a layer of
60,000 files cost two seconds; reading each 512-byte header with one ``pread`` and skipping the
content by arithmetic costs a few microseconds. ``tarfile`` still reads compressed layers, and
the tests check both count the same on ustar, GNU and pax archives.

What it understands (as ``tarfile`` does): octal and base-256 numbers, the header checksum,
pax extended headers (``x``, whose ``size`` record overrides the header's; ``g``), GNU long
names and links (``L``, ``K``), and which entry types carry data (regular files, contiguous
files, GNU sparse files and unknown types; links, directories and devices do not).
"""

from __future__ import annotations

import os

BLOCK = 512
_ZERO = bytes(BLOCK)
_NO_DATA = frozenset(b"123456")  # hard link, symlink, char/block device, directory, FIFO
_EXTENDED = frozenset(b"xgLK")  # headers that describe the next entry, not entries


class TarDamaged(Exception):
    """The headers end early or do not add up (truncated or not a tar)."""


def _number(field: bytes) -> int:
    if field[0] & 0x80:  # base-256, for sizes over 8 GiB
        return int.from_bytes(field[1:], "big")
    text = field.split(b"\0", 1)[0].strip()
    return int(text, 8) if text else 0


def _checksum_ok(header: bytes) -> bool:
    # The checksum counts its own 8-byte field as spaces; one pass over the header is the cost.
    stored = header[148:156]
    return _number(stored) == sum(header) - sum(stored) + 8 * 32


def _pax_size(data: bytes) -> int | None:
    """The ``size`` record of pax extended header data (``"<len> <key>=<value>\\n"`` records)."""
    position = 0
    while position < len(data):
        space = data.find(b" ", position)
        if space < 0:
            break
        length = int(data[position:space])
        key, _, value = data[space + 1 : position + length - 1].partition(b"=")
        if key == b"size":
            return int(value)
        if length <= 0:
            break
        position += length
    return None


def count_entries(fd: int, start: int, length: int) -> int:
    """Entries of the tar at bytes ``[start, start + length)`` of ``fd``."""
    offset = 0
    entries = 0
    next_size: int | None = None
    while offset + BLOCK <= length:
        header = os.pread(fd, BLOCK, start + offset)
        if len(header) < BLOCK:
            raise TarDamaged(f"header at byte {offset} is cut short")
        if header == _ZERO:
            return entries  # end-of-archive marker
        try:
            if not _checksum_ok(header):
                raise TarDamaged(f"bad header checksum at byte {offset}")
            size = _number(header[124:136])
        except ValueError:
            raise TarDamaged(f"unreadable header at byte {offset}") from None
        kind = header[156]
        offset += BLOCK
        if kind in _EXTENDED:
            if kind == ord("x"):
                next_size = _pax_size(os.pread(fd, size, start + offset))
        else:
            entries += 1
            if next_size is not None:
                size, next_size = next_size, None
            if kind in _NO_DATA:
                size = 0
        offset += -(-size // BLOCK) * BLOCK  # content, padded to whole blocks
        if offset > length:
            raise TarDamaged(f"entry {entries} runs past the end of the layer")
    if offset < length:  # no end-of-archive marker, and a partial header
        raise TarDamaged(f"cut short: only {length - offset} bytes of the header at byte {offset}")
    return entries

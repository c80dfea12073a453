"""Byte sizes as the guide writes them (decimal: 1 GB = 10**9 bytes), both ways."""

from __future__ import annotations

import re

from majob.errors import UserInputError

_UNITS = {"": 1, "b": 1, "k": 10**3, "m": 10**6, "g": 10**9, "t": 10**12}
_BINARY = {"ki": 2**10, "mi": 2**20, "gi": 2**30, "ti": 2**40}
_SIZE = re.compile(r"^\s*(\d+(?:\.\d+)?)\s*([kmgt]i?)?b?\s*$", re.IGNORECASE)


def parse_size(text: str) -> int:
    """``"1GB"``, ``"500MB"``, ``"2GiB"``, ``"4096"`` → bytes; ``UserInputError`` otherwise."""
    match = _SIZE.match(text)
    if match is None:
        raise UserInputError(
            f"{text!r} is not a size", hint="write a number with an optional unit: 4096, 500MB, 1GB"
        )
    number, unit = match.group(1), (match.group(2) or "").lower()
    factor = _BINARY[unit] if unit in _BINARY else _UNITS[unit]
    return int(float(number) * factor)


def format_size(size: int) -> str:
    """Bytes for people, decimal units, three significant digits (``1.23 GB``)."""
    value = float(size)
    for unit in ("B", "kB", "MB", "GB"):
        if value < 1000:
            return f"{size} B" if unit == "B" else f"{value:.3g} {unit}"
        value /= 1000
    return f"{value:.3g} TB"

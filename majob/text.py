"""Small wording helpers for what majob prints: counts with their noun, sizes."""

from __future__ import annotations


def counted(count: int, noun: str, plural: str | None = None) -> str:
    """``1 file``, ``2 files``, ``0 files`` (``plural`` for nouns not made with ``s``)."""
    return f"{count} {noun}" if count == 1 else f"{count} {plural or noun + 's'}"


def human_bytes(count: int) -> str:
    """``512 B``, ``1.5 KiB``, ``3.0 MiB``, ``2.0 GiB`` (binary units, as ``ls -h``)."""
    value = float(count)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if value < 1024 or unit == "GiB":
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    raise AssertionError("unreachable")

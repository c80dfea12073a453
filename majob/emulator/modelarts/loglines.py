"""Where each line of a task's growing log starts, so the log endpoints read only what they send.

A client following a job asks for the lines after the last one it has, every fraction of a
second. Reading and splitting the whole log for each request made following a long job cost the
square of its length; ``LineIndex`` remembers the byte offset of every complete line and, on each
request, scans only the bytes appended since the last one. A log that shrank (it was replaced) is
scanned again from the start.
"""

from __future__ import annotations

import os
import threading
from array import array
from pathlib import Path

_SCAN = 1 << 20  # bytes read at a time while looking for line ends


class LineIndex:
    """The complete lines of one log file (a line is complete once its ``\\n`` is written)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._starts = array("q", [0])  # where line i starts; the last entry: after the last line
        self._scanned = 0

    def count(self) -> int:
        """How many complete lines the log holds now."""
        with self._lock:
            self._catch_up()
            return len(self._starts) - 1

    def lines(self, first: int, count: int) -> list[str]:
        """Complete lines ``first`` to ``first + count - 1`` (0-based; fewer at the end)."""
        with self._lock:
            self._catch_up()
            last = min(first + count, len(self._starts) - 1)
            if first >= last:
                return []
            start, end = self._starts[first], self._starts[last]
        with self.path.open("rb") as log:
            log.seek(start)
            data = log.read(end - start)
        # Lines end at b"\n", which never falls inside a UTF-8 sequence.
        return data.decode("utf-8", errors="replace").split("\n")[:-1]

    def _catch_up(self) -> None:
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size < self._scanned:
            self._starts = array("q", [0])
            self._scanned = 0
        if size == self._scanned:
            return
        with self.path.open("rb") as log:
            # What was scanned holds no line end after the last complete line: skip it.
            position = self._scanned
            log.seek(position)
            while position < size:
                block = log.read(min(_SCAN, size - position))
                if not block:
                    break
                end = block.find(b"\n")
                while end >= 0:
                    self._starts.append(position + end + 1)
                    end = block.find(b"\n", end + 1)
                position += len(block)
        self._scanned = position


def tail(path: Path, limit: int) -> tuple[bytes, int]:
    """The last ``limit`` bytes of the file at ``path`` and its whole size (``b"", 0`` when it
    does not exist yet), read without reading the rest."""
    try:
        with path.open("rb") as log:
            size = os.fstat(log.fileno()).st_size
            log.seek(max(0, size - limit))
            return log.read(limit), size
    except FileNotFoundError:
        return b"", 0

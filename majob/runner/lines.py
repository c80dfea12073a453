"""Cut a node's output into lines: ``\\n``, ``\\r\\n`` and a lone ``\\r`` end one; none is longer
than a limit.

``readline()`` on a node's pipe waits for a ``\\n``: a progress bar that redraws itself with
``\\r`` (tqdm) or a script that prints megabytes without a line break built one line as large as
all its output, held in memory and shown at the end. ``LineSplitter`` ends a line at each
``\\r`` too (each redraw is one line on the terminal) and keeps at most ``limit`` bytes of a
line: the rest is counted, not kept. Each ``Line`` carries the bytes that ended it, so the
node's log keeps the output's own line ends.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

LINE_LIMIT = 64 * 1024  # bytes of one line kept and shown; the rest is counted as dropped
_LINE_END = re.compile(rb"\r\n|\r|\n")


@dataclass(frozen=True)
class Line:
    data: bytes  # the line without its end, at most the splitter's limit
    end: bytes  # b"\n", b"\r\n", b"\r", or b"" for output that ended without a line end
    dropped: int = 0  # bytes of the line past the limit, not kept


class LineSplitter:
    """Feed it the pipe's chunks as they come; it returns the lines they complete."""

    def __init__(self, limit: int = LINE_LIMIT) -> None:
        self.limit = limit
        self._kept = bytearray()
        self._dropped = 0
        # A chunk that ends in b"\r" cannot tell yet whether b"\n" follows (one b"\r\n" end).
        self._pending_cr = False

    def feed(self, chunk: bytes) -> list[Line]:
        lines: list[Line] = []
        start = 0
        if self._pending_cr and chunk:
            self._pending_cr = False
            crlf = chunk.startswith(b"\n")
            lines.append(self._take(b"\r\n" if crlf else b"\r"))
            start = 1 if crlf else 0
        for found in _LINE_END.finditer(chunk, start):
            self._keep(chunk[start : found.start()])
            start = found.end()
            if found.group() == b"\r" and start == len(chunk):
                self._pending_cr = True
            else:
                lines.append(self._take(found.group()))
        self._keep(chunk[start:])
        return lines

    def close(self) -> list[Line]:
        """The output ended: what is left is a last line (ended by ``\\r``, or by nothing)."""
        if self._pending_cr:
            self._pending_cr = False
            return [self._take(b"\r")]
        if self._kept or self._dropped:
            return [self._take(b"")]
        return []

    def _keep(self, data: bytes) -> None:
        room = self.limit - len(self._kept)
        self._kept += data[:room]
        self._dropped += max(0, len(data) - room)

    def _take(self, end: bytes) -> Line:
        line = Line(bytes(self._kept), end, self._dropped)
        self._kept.clear()
        self._dropped = 0
        return line

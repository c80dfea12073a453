"""Where ``ast`` nodes are in one file's source, in the units reports and libcst use.

``ast`` columns count UTF-8 bytes; findings and the codemods (libcst) count characters. The
lines are split only when a file needs them: for an ASCII file, never for spans.
"""

from __future__ import annotations

import ast
import io

from majob.migrate.findings import Span


def source_lines(source: str) -> list[str]:
    """The lines as Python's tokenizer counts them (``\n``, ``\r\n``, ``\r``; not the form
    feeds and other separators ``str.splitlines`` also splits on), with their endings."""
    return io.StringIO(source, newline="").readlines()


def top_level_ranges(tree: ast.Module) -> list[tuple[int, int]]:
    """Line ranges (1-based, inclusive) of the top-level statements, decorators included;
    statements sharing a line are merged."""
    ranges: list[tuple[int, int]] = []
    for stmt in tree.body:
        decorators = getattr(stmt, "decorator_list", [])
        start = min([stmt.lineno, *(d.lineno for d in decorators)])
        end = stmt.end_lineno or stmt.lineno
        if ranges and start <= ranges[-1][1]:
            ranges[-1] = (ranges[-1][0], max(end, ranges[-1][1]))
        else:
            ranges.append((start, end))
    return ranges


class SourceText:
    """Spans and source segments of the nodes parsed from ``source``."""

    def __init__(self, source: str) -> None:
        self.source = source
        self._ascii = source.isascii()
        self._lines: list[str] | None = None
        self._segment_lines: list[bytes] | None = None

    def span(self, node: ast.AST) -> Span:
        """Where ``node`` is, in characters."""
        line: int = node.lineno  # type: ignore[attr-defined]
        end_line: int = node.end_lineno  # type: ignore[attr-defined]
        col: int = node.col_offset  # type: ignore[attr-defined]
        end_col: int = node.end_col_offset  # type: ignore[attr-defined]
        if not self._ascii:
            col, end_col = self._char_col(line, col), self._char_col(end_line, end_col)
        return Span(line, col, end_line, end_col)

    def _char_col(self, line: int, byte_col: int) -> int:
        # ast columns count UTF-8 bytes; reports and libcst count characters.
        if self._lines is None:
            self._lines = source_lines(self.source)
        text = self._lines[line - 1] if line - 1 < len(self._lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def segment(self, node: ast.AST) -> str | None:
        """The source text of ``node`` (``ast.get_source_segment`` re-splits the whole file on
        every call, which made it the slowest part of a check)."""
        first: int = node.lineno - 1  # type: ignore[attr-defined]
        last: int = node.end_lineno - 1  # type: ignore[attr-defined]
        start: int = node.col_offset  # type: ignore[attr-defined]
        end: int = node.end_col_offset  # type: ignore[attr-defined]
        if self._ascii:  # byte columns are character columns: no encoding needed
            if self._lines is None:
                self._lines = source_lines(self.source)
            text_lines = self._lines
            if last >= len(text_lines):
                return None
            if first == last:
                return text_lines[first][start:end]
            return "".join(
                [text_lines[first][start:], *text_lines[first + 1 : last], text_lines[last][:end]]
            )
        if self._segment_lines is None:
            self._segment_lines = [line.encode("utf-8") for line in source_lines(self.source)]
        lines = self._segment_lines
        if last >= len(lines):
            return None
        if first == last:
            return lines[first][start:end].decode("utf-8", errors="replace")
        parts = [lines[first][start:], *lines[first + 1 : last], lines[last][:end]]
        return b"".join(parts).decode("utf-8", errors="replace")

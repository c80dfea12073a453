"""Edits inside one expression's own text (a renamed attribute, a replaced name or string),
spliced into the source at the checker's spans: most fixes need no libcst at all."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from majob.migrate.findings import Fix

# Edits inside one expression's own text: applied as text when they do not overlap.
_TEXT_ACTIONS = frozenset({"replace-expr", "replace-string", "rename-attr"})
_TRAILING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")


def _text_edit(text: str, fix: Fix) -> str | None:
    """The new text of the span ``fix`` edits, or None when it does not fit the text."""
    if fix.action == "replace-expr":
        return fix.code
    if fix.action == "replace-string":
        return text.replace(fix.old, fix.new, 1) if fix.old in text else None
    if fix.action == "rename-attr" and _TRAILING_NAME.search(text):
        return _TRAILING_NAME.sub(fix.code, text)
    return None


def apply_as_text(lines: list[str], start: int, end: int, fixes: Sequence[Fix]) -> str | None:
    """Lines ``start``..``end`` (1-based) with ``fixes`` spliced in, or None when a fix is not a
    plain text edit or two overlap (libcst then does the chunk). The spans are the checker's,
    in characters, and exclude parentheses, as libcst's node ranges do."""
    if any(f.action not in _TEXT_ACTIONS for f in fixes):
        return None
    chunk = "".join(lines[start - 1 : end])
    offsets = [0]
    for line in lines[start - 1 : end]:
        offsets.append(offsets[-1] + len(line))

    def offset(line: int, col: int) -> int:
        return offsets[line - start] + col

    spans = sorted(
        (
            (offset(f.span.line, f.span.col), offset(f.span.end_line, f.span.end_col), f)
            for f in fixes
        ),
        key=lambda item: item[0],
    )
    for (_, first_end, _), (second_start, _, _) in itertools.pairwise(spans):
        if second_start < first_end:
            return None
    for begin, stop, fix in reversed(spans):
        new = _text_edit(chunk[begin:stop], fix)
        if new is None:
            return None
        chunk = chunk[:begin] + new + chunk[stop:]
    return chunk

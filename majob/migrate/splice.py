"""Applying planned fixes as text where that writes what libcst would, libcst for the rest.

libcst's import, parse and position metadata cost more than the rest of a migration, so the fixes
are grouped by top-level statement and a statement goes through libcst (``codemods``, imported
only then) only when its fixes are more than text edits: a renamed attribute, a replaced name or
string is spliced into its span, and a one-line statement inserted before or after a one-line
simple statement (``import torch_npu`` after ``import torch``) becomes a line of its own. The text
between the statements is kept byte for byte.
"""

from __future__ import annotations

import ast
import bisect
import itertools
import re
import warnings
from collections import defaultdict
from collections.abc import Sequence

from majob.migrate.findings import Fix, Span
from majob.migrate.source_text import source_lines, top_level_ranges

__all__ = ["apply_fixes"]

# Edits inside one expression's own text: applied as text when they do not overlap.
_TEXT_ACTIONS = frozenset({"replace-expr", "replace-string", "rename-attr"})
_INSERT_ACTIONS = frozenset({"insert-before", "insert-after"})
_TRAILING_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*$")
_COMPOUND = (
    ast.If,
    ast.For,
    ast.AsyncFor,
    ast.While,
    ast.With,
    ast.AsyncWith,
    ast.Try,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
    ast.Match,
)


def _text_edit(text: str, fix: Fix) -> str | None:
    """The new text of the span ``fix`` edits, or None when it does not fit the text."""
    if fix.action == "replace-expr":
        return fix.code
    if fix.action == "replace-string":
        return text.replace(fix.old, fix.new, 1) if fix.old in text else None
    if fix.action == "rename-attr" and _TRAILING_NAME.search(text):
        return _TRAILING_NAME.sub(fix.code, text)
    return None


def _spliced(lines: list[str], start: int, end: int, fixes: Sequence[Fix]) -> str | None:
    """Lines ``start``..``end`` (1-based) with the expression edits ``fixes`` spliced in, or None
    when one does not fit its text or two overlap. The spans are the checker's, in characters,
    and exclude parentheses, as libcst's node ranges do."""
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


def _one_line_simple_statement(text: str) -> bool:
    """``text`` is one ``\\n``-ended line of simple statements (no block, no comment in what
    libcst would move): an inserted line then goes where libcst puts it."""
    if text.count("\n") != 1 or not text.endswith("\n") or "\r" in text:
        return False
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            body = ast.parse(text).body
    except (SyntaxError, ValueError):
        return False
    return bool(body) and not any(isinstance(stmt, _COMPOUND) for stmt in body)


def _inserted_line(fix: Fix) -> str | None:
    # libcst parses ``code`` as a module and keeps only its statements: a comment, blank line or
    # second line could be dropped or reflowed there, so only a plain one-liner is written as text.
    code = fix.code.removesuffix("\n")
    if not code or code != code.strip() or any(c in code for c in "\n\r#\\"):
        return None
    return code + "\n"


def _apply_as_text(lines: list[str], start: int, end: int, fixes: Sequence[Fix]) -> str | None:
    """Lines ``start``..``end`` with ``fixes`` applied as text, or None when libcst must do it:
    a fix that is not a text edit or an insertion, an insertion next to anything but a one-line
    simple statement, two edits that overlap."""
    if any(f.action not in _TEXT_ACTIONS and f.action not in _INSERT_ACTIONS for f in fixes):
        return None
    edits = [f for f in fixes if f.action in _TEXT_ACTIONS]
    inserts = [f for f in fixes if f.action in _INSERT_ACTIONS]
    chunk = _spliced(lines, start, end, edits) if edits else "".join(lines[start - 1 : end])
    if chunk is None or not inserts:
        return chunk
    if start != end or not _one_line_simple_statement(lines[start - 1]):
        return None
    before: list[str] = []
    after: list[str] = []
    for fix in inserts:  # in the order libcst inserts them
        line = _inserted_line(fix)
        if line is None:
            return None
        (before if fix.action == "insert-before" else after).append(line)
    return "".join([*before, chunk, *after])


def _top_level_ranges(source: str) -> list[tuple[int, int]] | None:
    """Line ranges of the top-level statements (see ``top_level_ranges``), parsing ``source``."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tree = ast.parse(source)
    except (SyntaxError, ValueError):
        return None
    return top_level_ranges(tree)


def _through_libcst(source: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    from majob.migrate.codemods import apply_to_module

    return apply_to_module(source, fixes)


def apply_fixes(
    source: str, fixes: Sequence[Fix], ranges: list[tuple[int, int]] | None = None
) -> tuple[str, list[Fix]]:
    """``source`` with ``fixes`` applied, and the fixes that found no node to apply to.

    Each top-level statement that holds a fix is done on its own: as text when its fixes allow
    (see the module's docstring), else through libcst. ``ranges``: the top-level statements'
    lines when the caller has parsed ``source``.
    """
    if not fixes:
        return source, []
    ranges = ranges if ranges is not None else _top_level_ranges(source)
    if ranges is None or any(f.action == "insert-top" for f in fixes):
        return _through_libcst(source, fixes)
    starts = [start for start, _ in ranges]
    groups: dict[tuple[int, int], list[Fix]] = defaultdict(list)
    for fix in fixes:
        index = bisect.bisect_right(starts, fix.span.line) - 1
        if index < 0 or fix.span.end_line > ranges[index][1]:
            return _through_libcst(source, fixes)
        groups[ranges[index]].append(fix)
    lines = source_lines(source)
    missed: list[Fix] = []
    for (start, end), group in sorted(groups.items(), reverse=True):
        text = _apply_as_text(lines, start, end, group)
        if text is not None:
            lines[start - 1 : end] = [text]
            continue
        shift = start - 1
        local = [
            f._replace(
                span=Span(f.span.line - shift, f.span.col, f.span.end_line - shift, f.span.end_col),
            )
            for f in group
        ]
        chunk, chunk_missed = _through_libcst("".join(lines[start - 1 : end]), local)
        missed.extend(group[local.index(f)] for f in chunk_missed)
        lines[start - 1 : end] = [chunk]
    return "".join(lines), missed

"""Files that do not parse as Python 3: report each syntax error, and check the rest anyway.

Training scripts of the PyTorch 0.3 era call ``x.cuda(async=True)``; ``async`` is a keyword since
Python 3.7, so the whole file is a syntax error and a checker that skips it reports nothing else.
Here each such keyword argument is read as a placeholder of the same length (every column stays
where it was, so findings and fixes elsewhere keep their places) and offered as a fix
(``non_blocking=True``, its name since PyTorch 0.4). Any other syntax error (a Python 2 ``print``
statement, ``except E, e:``) blanks its line, which is reported, and the rest is checked. A
one-line ``print x, y`` is offered its call (``print(x, y)``: the same output); one that keeps the
line open (``print x,``) or writes to a file (``print >>f, x``) says something a call spells
differently, and is left by hand.
"""

from __future__ import annotations

import ast
import bisect
import io
import itertools
import re
import tokenize
import warnings
from typing import NamedTuple

from majob.migrate.findings import Span
from majob.migrate.source_text import source_lines

# What the analysis reads instead of the keyword: an identifier as long as ``async``.
_PLACEHOLDER = "_asyn"
_MAX_BLANKED = 20  # lines blanked before giving up on a file
# A comment, a string (any prefix, triple quotes first, escapes skipped), or an ``async``
# followed by ``=`` (not ``==``): only that last alternative is code. Compiled on first use (by
# ``re``'s cache): only a file that does not parse needs it.
_CODE_ASYNC = (
    r"#[^\r\n]*"
    r"|[rRbBuUfF]{0,2}(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''"
    r"|\"(?:\\.|[^\"\\\r\n])*\"|'(?:\\.|[^'\\\r\n])*')"
    r"|(?P<keyword>\basync(?=\s*=(?!=)))"
)
_PRINT_STATEMENT = re.compile(r"^\s*(print)\s+[^\s(=]")
_PYTHON2_HINTS = (
    (re.compile(r"^\s*print\s+[^\s(=]"), "a Python 2 print statement: use print(...)"),
    (re.compile(r"^\s*except\s+[^:]+,\s*\w+\s*:"), "Python 2 `except E, e:`: use `except E as e:`"),
    (re.compile(r"^\s*exec\s+[\"'\w]"), "a Python 2 exec statement: use exec(...)"),
    (re.compile(r"\bur[\"']"), "a Python 2 ur'' string: drop the u"),
    (re.compile(r"<>"), "Python 2 `<>`: use `!=`"),
)


class SyntaxProblem(NamedTuple):
    """One syntax error: where, what, and (for a keyword argument) the text that fixes it."""

    span: Span
    message: str
    old: str = ""
    new: str = ""

    @property
    def repairable(self) -> bool:
        return bool(self.new)


class Parsed(NamedTuple):
    """A module parsed from ``text``: the source itself, or a copy with its errors read around."""

    tree: ast.Module
    text: str
    problems: list[SyntaxProblem]


def parse(source: str, path: str) -> Parsed:
    """Parse ``source``; raise the first ``SyntaxError`` (or ``ValueError``) when even a copy with
    its ``async=`` keywords read as placeholders and its other bad lines blanked does not parse."""
    try:
        return Parsed(_parse(source, path), source, [])
    except SyntaxError as first:
        text, problems = _read_async_keywords(source)
        blanked = 0
        while True:
            try:
                return Parsed(_parse(text, path), text, problems)
            except SyntaxError as error:
                line = error.lineno
                if line is None or blanked >= _MAX_BLANKED or line > len(source_lines(text)):
                    raise first from None
                text = _blank_line(text, line)
                problems.append(_problem(source, error, line))
                blanked += 1


def _parse(text: str, path: str) -> ast.Module:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to raise
        return ast.parse(text, filename=path)


def _read_async_keywords(source: str) -> tuple[str, list[SyntaxProblem]]:
    """``source`` with every ``async=`` keyword argument read as a placeholder, and the fixes.

    One scan with ``_CODE_ASYNC``, which consumes strings and comments whole, so an ``async=``
    in them is passed over (Python's own tokenizer, written in Python, cost five parses)."""
    lines = source_lines(source)
    starts = list(itertools.accumulate((len(line) for line in lines), initial=0))
    problems: list[SyntaxProblem] = []
    for match in re.finditer(_CODE_ASYNC, source, re.DOTALL):
        if match.lastgroup != "keyword":
            continue  # a string or a comment
        line = bisect.bisect_right(starts, match.start())
        col = match.start() - starts[line - 1]
        text = lines[line - 1]
        lines[line - 1] = text[:col] + _PLACEHOLDER + text[col + len("async") :]
        span = Span(line, col, line, col + len("async"))
        message = (
            "`async` is a keyword since Python 3.7: the PyTorch 0.3 era `async=True` is "
            "`non_blocking=True`"
        )
        problems.append(SyntaxProblem(span, message, "async", "non_blocking"))
    return "".join(lines), problems


def _blank_line(text: str, line: int) -> str:
    """``text`` with line ``line`` replaced by ``pass`` at the same indentation."""
    lines = source_lines(text)
    old = lines[line - 1]
    indent = old[: len(old) - len(old.lstrip(" \t"))]
    ending = "\n" if old.endswith("\n") else ""
    lines[line - 1] = f"{indent}pass{ending}"
    return "".join(lines)


def _problem(source: str, error: SyntaxError, line: int) -> SyntaxProblem:
    lines = source_lines(source)
    text = lines[line - 1] if line - 1 < len(lines) else ""
    hint = next((hint for pattern, hint in _PYTHON2_HINTS if pattern.search(text)), "")
    detail = error.msg + (f" ({hint})" if hint else "")
    call = _print_call(text)
    if call is not None:
        col, old, new = call
        return SyntaxProblem(Span(line, col, line, col + len(old)), detail, old, new)
    col = max((error.offset or 1) - 1, 0)
    return SyntaxProblem(Span(line, col, line, col), detail)


def _print_call(text: str) -> tuple[int, str, str] | None:
    """``print "loss %f" % x  # note``: where the statement starts, its text, and the call that
    prints the same (``print("loss %f" % x)``); None when the line is no such statement."""
    match = _PRINT_STATEMENT.match(text)
    if match is None:
        return None
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text.lstrip(" \t")).readline))
    except (tokenize.TokenError, SyntaxError):
        return None  # the statement goes on past this line
    ends = [t.start[1] for t in tokens if t.type in (tokenize.COMMENT, tokenize.NEWLINE)]
    col = match.start(1)
    old = text[col : col + ends[0]].rstrip() if ends else ""
    values = old[len("print") :].strip()
    if not values or values.endswith(",") or values.startswith(">>"):
        return None
    new = f"print({values})"
    try:
        _parse(new, "<print>")
    except SyntaxError:
        return None
    return col, old, new


def repaired(source: str, problems: list[SyntaxProblem]) -> str:
    """``source`` with the fixes of its repairable problems applied (each an edit in one line)."""
    lines = source_lines(source)
    for problem in sorted(problems, key=lambda p: p.span, reverse=True):
        if not problem.repairable:
            continue
        span = problem.span
        text = lines[span.line - 1]
        if text[span.col : span.end_col] == problem.old:
            lines[span.line - 1] = text[: span.col] + problem.new + text[span.end_col :]
    return "".join(lines)

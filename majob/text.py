"""Small wording helpers for what majob prints: counts with their noun, sizes, names it did not
choose (OBS keys, file names) made safe to print."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


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


def clock(ms: float) -> str:
    """A duration as a job's status shows it: ``4m05s``, ``1h02m03s``."""
    seconds = int(ms // 1000)
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}h{minutes:02d}m{secs:02d}s" if hours else f"{minutes}m{secs:02d}s"


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t", "\\": "\\\\"}


def printable(name: str) -> str:
    """``name`` as one line a terminal shows as it is, as ``ls -b`` or ``repr`` do: a character
    that is not printable (a control such as ESC or ``\\n``, an invisible or bidirectional format
    character, a line separator) is written as an escape (``\\x1b``, ``\\n``, ``\\u202e``), and
    a backslash is doubled so that an escape cannot be forged. For OBS keys and file names."""
    if name.isprintable() and "\\" not in name:
        return name
    return "".join(c if c.isprintable() and c != "\\" else _escape(c) for c in name)


def one_line(text: str) -> str:
    """``text`` (a message quoting what a file said) with its non-printable characters escaped
    as ``printable`` does, backslashes left as they are: one line, nothing a terminal acts on."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(char: str) -> str:
    named = _NAMED_ESCAPES.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"


def did_you_mean(word: str, choices: Iterable[str]) -> str:
    """``did you mean 'x'?`` for the closest of ``choices`` (a match but for case first), or
    the list of what there is when nothing is close."""
    options = sorted(set(choices))
    by_case = {c.lower(): c for c in options}
    close = difflib.get_close_matches(word, options, n=1, cutoff=0.6)
    if word.lower() in by_case:
        close = [by_case[word.lower()]]
    if close:
        return f"did you mean {close[0]!r}?"
    shown = ", ".join(options[:8]) + (", ..." if len(options) > 8 else "")
    return f"choose one of: {shown}" if options else "the service lists none"

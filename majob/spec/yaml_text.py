"""The first step of reading a spec that may be hostile: its bytes as text, bounded and UTF-8.

``read_text`` reads at most ``MAX_SPEC_BYTES`` (1 MiB; stat first, then a bounded read, so a pipe
or ``/dev/stdin`` is bounded too); ``decode`` accepts UTF-8 only (a UTF-8 byte-order mark is
skipped; UTF-16/32 and binary files are refused at the first bad byte's line:col). The problem
types that every step of ``majob.spec.safe_yaml`` raises or returns live here, with the first.
"""

from __future__ import annotations

import codecs
import re
import stat
from dataclasses import dataclass
from pathlib import Path

from majob.spec.positions import Loc

MAX_SPEC_BYTES = 1024 * 1024
"""A job spec is a few kB; anything over 1 MiB is the wrong file (or an attack)."""

# What ruamel's reader refuses as "unacceptable character"; found first here to give line:col.
# Compiling the whole class takes ~4 ms (its ranges span all of Unicode), more than the rest of
# the check: an ASCII spec, nearly every one, is searched with the ASCII part alone.
_NON_PRINTABLE_TEXT = "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
_NON_PRINTABLE_ASCII = re.compile("[^\x09\x0a\x0d\x20-\x7e]")
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)
_SAVE_AS_UTF8 = "save the spec as UTF-8"


@dataclass(frozen=True)
class YamlProblem:
    """A problem at 1-based ``line:col`` (0:0: the file as a whole), inside field ``loc``."""

    line: int
    col: int
    message: str
    loc: Loc = ()


class YamlRefused(Exception):
    """The text cannot be read as a job spec at all; ``problem`` says where and why."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def _refuse(line: int, col: int, message: str) -> YamlRefused:
    return YamlRefused(YamlProblem(line, col, message))


def read_text(path: Path) -> str:
    """The spec's text; ``YamlRefused`` if it is missing, too big, or not UTF-8 text."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise _refuse(0, 0, "is a directory, not a job spec file")
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_SPEC_BYTES:
            raise _refuse(1, 1, _too_big(f"the file is {info.st_size / 2**20:.1f} MiB"))
        # A pipe or a device has no size to stat: read one byte past the limit to find out.
        with path.open("rb") as stream:
            data = stream.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise _refuse(0, 0, "file not found") from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise _refuse(0, 0, f"cannot read the file: {reason}") from None
    if len(data) > MAX_SPEC_BYTES:
        raise _refuse(1, 1, _too_big("the input is longer"))
    return decode(data)


def _too_big(size: str) -> str:
    return (
        f"{size}: a job spec may be at most {MAX_SPEC_BYTES // 2**20} MiB (is this the right file?)"
    )


def decode(data: bytes) -> str:
    """``data`` as text: UTF-8 (a leading UTF-8 byte-order mark is dropped), printable."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            message = f"it starts with a {encoding} byte-order mark; {_SAVE_AS_UTF8}"
            raise _refuse(1, 1, f"not a UTF-8 text file: {message}")
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        col = len(data[line_start : error.start].decode("utf-8")) + 1
        line = data.count(b"\n", 0, error.start) + 1
        message = f"byte 0x{data[error.start]:02X} cannot be decoded; {_SAVE_AS_UTF8}"
        raise _refuse(line, col, f"not a UTF-8 text file: {message}") from None
    pattern = _NON_PRINTABLE_ASCII if text.isascii() else re.compile(_NON_PRINTABLE_TEXT)
    bad = pattern.search(text)
    if bad is not None:
        code = ord(bad.group())
        if code < 0x20 or code == 0x7F:
            message = f"not a UTF-8 text file: control character U+{code:04X} (a binary file?)"
        else:
            message = f"character U+{code:04X} is not allowed in YAML; remove it"
        raise _refuse(*line_col(text, bad.start()), message)
    return text


def line_col(text: str, index: int) -> tuple[int, int]:
    """The 1-based line and column of ``text[index]``."""
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


__all__ = ["MAX_SPEC_BYTES", "YamlProblem", "YamlRefused", "decode", "line_col", "read_text"]

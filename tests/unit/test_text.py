"""``printable``: what majob prints of a name it did not choose (an OBS key, a file name)."""

from __future__ import annotations

import pytest

from majob.text import printable


@pytest.mark.parametrize(
    ("name", "shown"),
    [
        ("plain/key ü.txt", "plain/key ü.txt"),
        ("a\nb", "a\\nb"),
        ("a\rb\tc", "a\\rb\\tc"),
        ("\x1b[2J", "\\x1b[2J"),
        ("nul\x00del\x7f", "nul\\x00del\\x7f"),
        ("c1\x9b", "c1\\x9b"),
        ("back\\slash", "back\\\\slash"),
        ("line\u2028sep", "line\\u2028sep"),
        ("abc\u202edcba", "abc\\u202edcba"),  # a right-to-left override reorders what follows
    ],
)
def test_control_characters_are_escaped_and_backslashes_doubled(name: str, shown: str) -> None:
    assert printable(name) == shown


def test_an_escaped_name_is_one_printable_line() -> None:
    every = "".join(chr(c) for c in range(0x3000)) + "\U000e0001\U0010ffff"
    shown = printable(every)
    assert shown.isprintable()  # and so no line break, no escape sequence
    assert "\\U000e0001" in shown and "\\u200b" in shown  # invisible: shown as escapes

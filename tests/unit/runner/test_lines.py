"""``LineSplitter``: line ends wherever the chunks of a pipe happen to cut them."""

from __future__ import annotations

import pytest

from majob.runner.lines import Line, LineSplitter


def split(chunks: list[bytes], limit: int = 10) -> list[Line]:
    splitter = LineSplitter(limit)
    lines = [line for chunk in chunks for line in splitter.feed(chunk)]
    return lines + splitter.close()


@pytest.mark.parametrize(
    "chunks",
    [
        [b"a\r\nb\rc\n\nd"],
        [b"a\r", b"\nb\r", b"c\n", b"\n", b"d"],
        [b"a", b"\r", b"\n", b"b", b"\r", b"c", b"\n", b"\n", b"d"],
    ],
)
def test_each_end_is_kept_with_its_line_however_the_chunks_fall(chunks: list[bytes]) -> None:
    assert split(chunks) == [
        Line(b"a", b"\r\n"),
        Line(b"b", b"\r"),
        Line(b"c", b"\n"),
        Line(b"", b"\n"),
        Line(b"d", b""),
    ]


def test_a_carriage_return_at_the_very_end_ends_the_last_line() -> None:
    assert split([b"50%\r"]) == [Line(b"50%", b"\r")]
    assert split([]) == []


def test_a_long_line_keeps_the_limit_and_counts_the_rest() -> None:
    assert split([b"0123456", b"789abcdef\nok\n"]) == [
        Line(b"0123456789", b"\n", dropped=6),
        Line(b"ok", b"\n"),
    ]
    assert split([b"x" * 25]) == [Line(b"x" * 10, b"", dropped=15)]

from __future__ import annotations

import pytest

from majob.errors import UserInputError
from majob.sizes import format_size, parse_size


@pytest.mark.parametrize(
    ("text", "size"),
    [
        ("4096", 4096),
        ("1GB", 10**9),
        ("1.5 gb", 1_500_000_000),
        ("500MB", 5 * 10**8),
        ("2GiB", 2 * 2**30),
        ("10k", 10_000),
    ],
)
def test_parse_size(text: str, size: int) -> None:
    assert parse_size(text) == size


def test_bad_size_is_a_user_error() -> None:
    with pytest.raises(UserInputError, match="'ten' is not a size"):
        parse_size("ten")


@pytest.mark.parametrize(
    ("size", "text"),
    [(999, "999 B"), (1000, "1 kB"), (1_234_567_890, "1.23 GB"), (15 * 10**12, "15 TB")],
)
def test_format_size(size: int, text: str) -> None:
    assert format_size(size) == text

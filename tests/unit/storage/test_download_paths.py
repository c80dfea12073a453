"""Keys from a listing must stay inside the target directory."""

from __future__ import annotations

import pytest

from majob.errors import StorageIntegrityError
from majob.storage.download import safe_relative_path


@pytest.mark.parametrize(
    "key",
    [
        "p/../escape.txt",
        "p/a/../../escape.txt",
        "p/..",
        "p//etc/passwd",
        "p/a\\..\\..\\x",
        "p/C:/Windows/x",
        "p/./a",
        "p/a\x00b",
        "other/x",
        "p/",
    ],
)
def test_unsafe_keys_are_refused(key: str) -> None:
    with pytest.raises(StorageIntegrityError, match="refusing to download key") as info:
        safe_relative_path(key, "p/", bucket="bkt")
    assert info.value.key == key


@pytest.mark.parametrize(
    ("key", "rel"),
    [("p/a.txt", "a.txt"), ("p/d/e/f.bin", "d/e/f.bin"), ("p/..a/b..", "..a/b..")],
)
def test_safe_keys(key: str, rel: str) -> None:
    assert safe_relative_path(key, "p/") == rel

"""``Masker``: the one way a secret is hidden in text, bytes, documents and exceptions."""

from __future__ import annotations

import traceback

from majob.masking import MASK, MaskedException, Masker

SECRET = "tok-5c1e0b7a"


def test_text_bytes_and_documents_show_the_mask() -> None:
    masker = Masker([SECRET, "ab"], ["", "xyz-secret-xyz"])
    assert masker.text(f"Bearer {SECRET}; ab") == f"Bearer {MASK}; ab"  # "ab": too short in text
    assert masker.raw(f"{SECRET}\n".encode()) == b"***\n"
    document = {"env": {"TOKEN": SECRET, "SHORT": "ab"}, "args": [f"--t={SECRET}", 2]}
    assert masker.data(document) == {"env": {"TOKEN": MASK, "SHORT": MASK}, "args": ["--t=***", 2]}
    # Longest first: a secret that holds another is masked whole.
    assert masker.text("xyz-secret-xyz") == MASK
    assert not Masker([""]) and masker


def test_an_exception_becomes_a_masked_stand_in_with_its_frames_and_causes() -> None:
    def fail() -> None:
        try:
            raise OSError(f"inner {SECRET}")
        except OSError as inner:
            raise ValueError(f"signing failed with {SECRET}") from inner

    try:
        fail()
    except ValueError as error:
        original = error
    stand_in = Masker([SECRET]).exception(original)
    assert isinstance(stand_in, MaskedException)
    assert str(stand_in) == f"builtins.ValueError: signing failed with {MASK}"
    assert str(stand_in.__cause__) == f"builtins.OSError: inner {MASK}"
    text = "".join(traceback.format_exception(stand_in))
    assert SECRET not in text and "in fail" in text  # the frames are kept


def test_a_looping_chain_ends() -> None:
    first, second = ValueError(SECRET), KeyError(SECRET)
    first.__cause__, second.__cause__ = second, first
    stand_in = Masker([SECRET]).exception(first)
    assert stand_in.__cause__ is not None and stand_in.__cause__.__cause__ is None

"""The one way majob hides a secret in what it prints or stores: ``Masker``.

A secret is a value majob must never show: the secret key and security token it signs requests
with, and the values a spec's ``${VAR}`` references filled into the job (``spec/envrefs.py``).
Every path that prints or stores text, a request body, a spec or an SDK exception passes it
through a ``Masker`` made of the secrets at hand, and ``***`` stands where a secret was.

An SDK exception is the one that needs care: its message may quote what was sent, and chaining
it as the ``__cause__`` of majob's error would carry it into every traceback (``MAJOB_DEBUG=1``).
``Masker.exception`` gives a stand-in (``MaskedException``) with the same type name, the message
masked and the same frames, to chain instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

MASK = "***"
# Shorter values are masked where a whole field holds them (a body's value, an argument) but
# not inside free text such as log lines: masking every "10" or "0.1" would garble the log.
MIN_MASKED_TEXT = 4


class MaskedException(Exception):
    """An SDK exception as majob keeps it: ``Type: message`` with every secret masked, and the
    original's traceback (its frames, never its text)."""


class Masker:
    """Shows ``***`` for each of ``secrets`` in text, bytes, JSON-like data and exceptions."""

    def __init__(self, *secrets: Iterable[str]) -> None:
        values = {value for group in secrets for value in group if value}
        self.values = frozenset(values)
        # Longest first: a value that contains another is masked whole.
        self._texts = sorted(
            (v for v in values if len(v) >= MIN_MASKED_TEXT), key=len, reverse=True
        )
        self._bytes = [v.encode("utf-8") for v in self._texts]

    def __bool__(self) -> bool:
        return bool(self.values)

    def text(self, text: str) -> str:
        for value in self._texts:
            text = text.replace(value, MASK)
        return text

    def raw(self, data: bytes) -> bytes:
        """``text`` for bytes as they came from a pipe (a node's output line)."""
        for value in self._bytes:
            data = data.replace(value, MASK.encode())
        return data

    def data(self, value: Any) -> Any:
        """A copy of a JSON-like document (a request body, a spec dump) with each string that
        is a secret, whatever its length, shown as ``***``, and each longer one masked inside
        other strings too; keys are masked like values."""
        if isinstance(value, str):
            return MASK if value in self.values else self.text(value)
        if isinstance(value, dict):
            return {self.data(k): self.data(v) for k, v in value.items()}
        if isinstance(value, (list, tuple)):
            return type(value)(self.data(item) for item in value)
        return value

    def exception(self, error: BaseException) -> MaskedException:
        """A stand-in for ``error`` to chain as a cause: its message masked, its traceback
        kept, and the exceptions it was raised from (or during) masked the same way."""
        return self._stand_in(error, set())

    def _stand_in(self, error: BaseException, seen: set[int]) -> MaskedException:
        seen.add(id(error))
        shown = self.text(str(error))
        name = f"{type(error).__module__}.{type(error).__qualname__}"
        stand_in = MaskedException(f"{name}: {shown}" if shown else name)
        stand_in.__traceback__ = error.__traceback__
        inner = error.__cause__ or (None if error.__suppress_context__ else error.__context__)
        if inner is not None and id(inner) not in seen:  # a chain can loop back on itself
            stand_in.__cause__ = self._stand_in(inner, seen)
        return stand_in


__all__ = ["MASK", "MIN_MASKED_TEXT", "MaskedException", "Masker"]

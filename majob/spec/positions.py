"""A YAML document as plain Python values plus where each value was written.

ruamel.yaml's round-trip loader knows the line and column of every key and item; pydantic wants
plain ``dict``/``list``/scalars. ``to_plain`` gives both: the plain tree and a ``Positions`` map
from a field path (``("inputs", 0, "obs")``) to 1-based ``(line, col)`` of the key and the value.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any

from ruamel.yaml.comments import CommentedMap, CommentedSeq, TaggedScalar

Loc = tuple[str | int, ...]


@dataclass(frozen=True)
class Where:
    """1-based positions of a key (or list item) and of its value, and the file they are in."""

    file: str
    key: tuple[int, int]
    value: tuple[int, int]


@dataclass
class Positions:
    """Field path -> ``Where``. Paths not written in the file fall back to their parent."""

    file: str
    by_loc: dict[Loc, Where] = field(default_factory=dict)

    def find(self, loc: Loc, *, key: bool = False) -> tuple[str, int, int]:
        """``(file, line, col)`` of ``loc`` or of its closest written ancestor."""
        for end in range(len(loc), -1, -1):
            where = self.by_loc.get(loc[:end])
            if where is not None:
                # A field that is not written itself is shown at its closest written parent's key.
                exact = end == len(loc)
                line, col = where.key if (key or not exact) else where.value
                return where.file, line, col
        return self.file, 1, 1

    def set(self, loc: Loc, where: Where) -> None:
        self.by_loc[loc] = where

    def drop_below(self, loc: Loc) -> None:
        """Forget positions inside ``loc`` (its value was replaced by an override)."""
        for known in [k for k in self.by_loc if k[: len(loc)] == loc and len(k) > len(loc)]:
            del self.by_loc[known]


def plain_scalar(value: Any) -> Any:
    """A ruamel scalar as the plain Python value it stands for."""
    if isinstance(value, TaggedScalar):
        return value.value
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, str):
        return str(value)
    if isinstance(value, (dt.date, dt.datetime)):
        return value.isoformat()
    return value


def to_plain(node: Any, positions: Positions, loc: Loc = ()) -> Any:
    """Convert ``node`` to plain values, recording the position of every key and item."""
    if isinstance(node, CommentedMap):
        out: dict[Any, Any] = {}
        for key, value in node.items():
            k_line, k_col = node.lc.key(key)
            v_line, v_col = node.lc.value(key)
            plain_key = plain_scalar(key)
            child = (*loc, plain_key if isinstance(plain_key, (str, int)) else str(plain_key))
            positions.set(
                child, Where(positions.file, (k_line + 1, k_col + 1), (v_line + 1, v_col + 1))
            )
            out[plain_key] = to_plain(value, positions, child)
        return out
    if isinstance(node, CommentedSeq):
        items: list[Any] = []
        for index, value in enumerate(node):
            line, col = node.lc.item(index)
            child = (*loc, index)
            positions.set(child, Where(positions.file, (line + 1, col + 1), (line + 1, col + 1)))
            items.append(to_plain(value, positions, child))
        return items
    return plain_scalar(node)

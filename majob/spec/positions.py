"""Where each value of a spec was written.

pydantic wants plain ``dict``/``list``/scalars and reports problems by field path; the user wants
``file:line:col``. ``Positions`` maps a field path (``("inputs", 0, "obs")``) to the 1-based
``(line, col)`` of its key and of its value; ``majob.spec.safe_yaml.to_plain`` fills it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

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

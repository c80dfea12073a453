"""One item of ``majob checklist`` (``checklist.py``), on its own so each item's module can
build one."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Item:
    key: str
    title: str
    status: str  # done, todo, not needed, not checked
    detail: str
    todo: str = ""

    def to_dict(self) -> dict[str, str]:
        return asdict(self)

"""The last compare's verdict per spec, for ``majob checklist``'s "precision checked" item.

One small JSON per spec name under ``.majob/precision/`` (in the project dir, beside
``.majob/runs``): written by ``majob compare``, read by ``last_precision_check``.
"""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import asdict, dataclass
from pathlib import Path

from majob.spec.fields import NAME_PATTERN

PRECISION_DIR = Path(".majob") / "precision"


@dataclass(frozen=True)
class PrecisionCheck:
    """One recorded compare: ``verdict`` is ``pass`` or ``fail``."""

    spec: str
    verdict: str
    golden: str
    target: str
    problems: tuple[str, ...]
    checked_at: str  # ISO 8601, UTC

    @property
    def passed(self) -> bool:
        return self.verdict == "pass"


def _path(spec: str, root: Path | None) -> Path:
    import re

    if not re.match(NAME_PATTERN, spec):
        raise ValueError(f"not a spec name: {spec!r}")
    return (root or Path.cwd()) / PRECISION_DIR / f"{spec}.json"


def save_check(
    spec: str,
    *,
    verdict: str,
    golden: str,
    target: str,
    problems: list[str],
    root: Path | None = None,
) -> PrecisionCheck:
    check = PrecisionCheck(
        spec=spec,
        verdict=verdict,
        golden=golden,
        target=target,
        problems=tuple(problems),
        checked_at=dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
    )
    path = _path(spec, root)
    path.parent.mkdir(parents=True, exist_ok=True)
    temp = path.with_suffix(".json.tmp")
    temp.write_text(json.dumps(asdict(check), indent=2) + "\n", encoding="utf-8")
    temp.replace(path)  # a reader never sees half a file
    return check


def last_precision_check(spec: str, root: Path | None = None) -> PrecisionCheck | None:
    """The last compare recorded for the spec named ``spec`` (``JobSpec.name``) under
    ``root`` (default: the current dir), or None when there is none (or it is unreadable)."""
    try:
        data = json.loads(_path(spec, root).read_text(encoding="utf-8"))
        return PrecisionCheck(
            spec=str(data["spec"]),
            verdict=str(data["verdict"]),
            golden=str(data["golden"]),
            target=str(data["target"]),
            problems=tuple(str(p) for p in data["problems"]),
            checked_at=str(data["checked_at"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None

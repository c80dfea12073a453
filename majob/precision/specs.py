"""The spec each side of a compare ran, kept in its dump, and what differs between the two.

A dump carries ``run-spec.json``: the spec as the run ran it (its stage applied, ``stages``
left out), with values from the environment as the ``${VAR}`` references that filled them (a
token is never written). ``majob run --dump`` writes it when it prepares the run; ``majob submit
--dump`` stages it with the bootstrap, which writes it on the node, so a dump read back from OBS
has it too. ``majob compare`` puts the differences at the top of its report: a changed learning
rate explains a parted loss curve before any API row does.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from majob.spec.models import JobSpec

SPEC_FILE = "run-spec.json"
MISSING = "(not set)"


def spec_record(spec: JobSpec) -> dict[str, Any]:
    """``spec`` as JSON, as written (references, not secrets), without its stage overrides."""
    return spec.as_written().model_dump(mode="json", exclude={"stages"})


def write_spec_record(spec: JobSpec, dump_dir: Path) -> None:
    dump_dir.mkdir(parents=True, exist_ok=True)
    text = json.dumps(spec_record(spec), indent=2, sort_keys=True) + "\n"
    (dump_dir / SPEC_FILE).write_text(text, encoding="utf-8")


def read_spec_record(dump_dir: Path | None) -> dict[str, Any] | None:
    """The spec a dump was made with; None for a dump made before majob kept it."""
    if dump_dir is None:
        return None
    try:
        data = json.loads((dump_dir / SPEC_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def spec_differences(a: dict[str, Any], b: dict[str, Any]) -> list[tuple[str, str, str]]:
    """``(field, A's value, B's value)`` for every field that differs, hyperparameters first."""
    found = _walk(a, b, "")
    return sorted(found, key=lambda row: (not row[0].startswith("hyperparameters."), row[0]))


def _walk(a: Any, b: Any, prefix: str) -> list[tuple[str, str, str]]:
    if isinstance(a, dict) and isinstance(b, dict):
        out = []
        for key in sorted(set(a) | set(b), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out += _walk(a.get(key, _Missing), b.get(key, _Missing), path)
        return out
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        out = []
        for index, (left, right) in enumerate(zip(a, b, strict=True)):
            out += _walk(left, right, f"{prefix}[{index}]")
        return out
    return [] if a == b else [(prefix or "(the whole spec)", _shown(a), _shown(b))]


class _Missing:
    """A field one spec has and the other has not."""


def _shown(value: Any) -> str:
    if value is _Missing:
        return MISSING
    return json.dumps(value, ensure_ascii=False) if not isinstance(value, str) else value

"""What a stage's gate compares: the spec digest and the code digest, and their diffs.

The spec digest (``spec/digest.py``) is taken over the normalised spec *without* ``stages``
(the per-stage overrides): a debug stage that runs one epoch checks the same spec the formal
stage runs. The code digest covers exactly the files the upload sends (``majob.service.code``:
the one scan a submit makes serves both), so a file the upload leaves out never closes a gate.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.service.code import code_digest, file_digests, scan_code
from majob.spec.digest import normalised_spec, spec_digest
from majob.spec.models import JobSpec

if TYPE_CHECKING:
    from majob.storage.plan import LocalFile


@dataclass(frozen=True)
class Fingerprint:
    """The code and spec a stage runs, digested (and kept whole, to name what changed)."""

    spec_digest: str
    code_digest: str
    spec_json: Mapping[str, Any] = field(default_factory=dict)
    code_files: Mapping[str, str] = field(default_factory=dict)
    # The scan the code digest was taken from: the upload sends these very files.
    files: tuple[LocalFile, ...] = field(default=(), compare=False, repr=False)

    @classmethod
    def of(
        cls,
        spec: JobSpec,
        *,
        files: Sequence[LocalFile] | None = None,
        cache_dir: Path | None = None,
    ) -> Fingerprint:
        """``spec``'s fingerprint; ``files``: the scan of its code that is uploaded, when the
        caller made it (else the code is scanned here, as an upload would)."""
        scanned = tuple(files) if files is not None else scan_code(spec, cache_dir=cache_dir)
        digests = file_digests(scanned)
        return cls(spec_digest(spec), code_digest(digests), normalised_spec(spec), digests, scanned)

    def matches(self, spec_digest: str, code_digest: str) -> bool:
        return (self.spec_digest, self.code_digest) == (spec_digest, code_digest)


def changed_files(before: Mapping[str, str], after: Mapping[str, str]) -> list[str]:
    """``train.py (changed)``, ``util.py (new)``, ``old.py (removed)``, sorted by path."""
    out = []
    for rel in sorted(set(before) | set(after)):
        if rel not in before:
            out.append(f"{rel} (new)")
        elif rel not in after:
            out.append(f"{rel} (removed)")
        elif before[rel] != after[rel]:
            out.append(f"{rel} (changed)")
    return out


def changed_fields(before: Any, after: Any, prefix: str = "") -> list[str]:
    """The dotted paths where two normalised specs differ, e.g. ``hyperparameters.lr``."""
    if isinstance(before, dict) and isinstance(after, dict):
        out = []
        for key in sorted(set(before) | set(after), key=str):
            path = f"{prefix}.{key}" if prefix else str(key)
            out += changed_fields(before.get(key), after.get(key), path)
        return out
    if (
        isinstance(before, list)
        and isinstance(after, list)
        and len(before) == len(after)
        and before != after
    ):
        out = []
        for index, (a, b) in enumerate(zip(before, after, strict=True)):
            out += changed_fields(a, b, f"{prefix}[{index}]")
        return out
    return [prefix or "(the whole spec)"] if before != after else []

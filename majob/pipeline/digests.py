"""What a stage's gate compares: the spec digest and the code digest, and their diffs.

The spec digest is taken over the normalised spec *without* ``stages`` (the per-stage
overrides): a debug stage that runs one epoch checks the same spec the formal stage runs. It is
the spec as written where a ``${VAR}`` filled a hyperparameter or env value
(``JobSpec.as_written``): the ledger keeps ``${TOKEN}``, never the token, and a rotated token
leaves the digest, and so the gates, as they were. The
code digest covers exactly the files the upload sends (``majob.service.code``: the one scan a
submit makes serves both), so a file the upload leaves out never closes a gate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.service.code import code_digest, file_digests, scan_code
from majob.spec.expect import NO_EXPECT
from majob.spec.fault_tolerance import NO_FAULT_TOLERANCE
from majob.spec.models import JobSpec

if TYPE_CHECKING:
    from majob.storage.plan import LocalFile


def normalised_spec(spec: JobSpec) -> dict[str, Any]:
    """The spec as JSON, without its stage overrides, its values from the environment as the
    references that filled them. Without its ``sweep:`` block too: how many trials search what
    changes no job a stage runs (a sweep's local smoke stays passed when the search is edited),
    and the specs recorded before sweeps existed keep their digests. Without the fields added
    since (``fault_tolerance``, ``expect.resumes``) while they hold their defaults, for the same
    reason: an upgrade of majob must not reopen every gate of an existing ledger."""
    written = spec.as_written()
    dumped = written.model_dump(mode="json", exclude={"stages", "sweep"})
    if written.fault_tolerance == NO_FAULT_TOLERANCE:
        del dumped["fault_tolerance"]
    if written.expect.resumes == NO_EXPECT.resumes:
        del dumped["expect"]["resumes"]
    return dumped


def spec_digest(spec: JobSpec) -> str:
    canonical = json.dumps(normalised_spec(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


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

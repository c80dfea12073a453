"""What a stage's gate compares: the spec digest and the code digest, and their diffs.

The spec digest is taken over the normalised spec *without* ``stages`` (the per-stage
overrides): a debug stage that runs one epoch checks the same spec the formal stage runs. It is
the spec as written where a ``${VAR}`` filled a hyperparameter or env value
(``JobSpec.as_written``): the ledger keeps ``${TOKEN}``, never the token, and a rotated token
leaves the digest, and so the gates, as they were. The
code digest covers exactly the files the upload would send (the sync's ignore rules, its hash
cache), so a file the upload leaves out never closes a gate.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majob.spec.models import JobSpec


def normalised_spec(spec: JobSpec) -> dict[str, Any]:
    """The spec as JSON, without its stage overrides, its values from the environment as the
    references that filled them."""
    return spec.as_written().model_dump(mode="json", exclude={"stages"})


def spec_digest(spec: JobSpec) -> str:
    canonical = json.dumps(normalised_spec(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def code_files(spec: JobSpec, *, cache_dir: Path | None = None) -> dict[str, str]:
    """Each file the upload would send (relative path) and its content MD5."""
    from majob.storage.localstate import HashCache
    from majob.storage.plan import scan_local

    root = Path(spec.code.dir).resolve()
    cache = HashCache.for_root(root, cache_dir)
    files = scan_local(root, spec.code.ignore, cache)
    cache.save()
    return {f.rel: f.md5 or f"size={f.size};mtime={f.mtime_ns}" for f in files}


def code_digest(files: Mapping[str, str]) -> str:
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(f"{rel}\0{files[rel]}\n".encode())
    return digest.hexdigest()


@dataclass(frozen=True)
class Fingerprint:
    """The code and spec a stage runs, digested (and kept whole, to name what changed)."""

    spec_digest: str
    code_digest: str
    spec_json: Mapping[str, Any] = field(default_factory=dict)
    code_files: Mapping[str, str] = field(default_factory=dict)

    @classmethod
    def of(cls, spec: JobSpec, *, cache_dir: Path | None = None) -> Fingerprint:
        files = code_files(spec, cache_dir=cache_dir)
        return cls(spec_digest(spec), code_digest(files), normalised_spec(spec), files)

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

"""The golden specs of the compiler tests, loaded with the real loader.

(A uniquely named helper module rather than ``conftest``: test folders have no ``__init__.py``,
so a second ``conftest`` import elsewhere would shadow this one.)
"""

from __future__ import annotations

from pathlib import Path

from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from majob.spec.profiles import Profile

GOLDEN_DIR = Path(__file__).resolve().parents[2] / "golden" / "compile"
SPEC_DIR = GOLDEN_DIR / "specs"
CASES = sorted(p.stem for p in SPEC_DIR.glob("*.yaml"))


def load_case(case: str) -> JobSpec:
    """A golden spec, isolated from the user's profile and environment."""
    return load_spec(SPEC_DIR / f"{case}.yaml", profile=Profile(), environ={}, check_files=False)

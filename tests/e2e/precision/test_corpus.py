"""The planted-difference corpus (tests/precision_corpus): compare finds each planted difference
at its step and line or API, and an identical pair reports none. The same cases bench/precision.py
--only corpus prints as a table; here each must be found."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]  # 8 real dump runs
pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "precision_corpus"))
from corpus import CASES, run_corpus  # noqa: E402


def test_every_planted_difference_is_found_and_identical_runs_report_none(tmp_path: Path) -> None:
    rows = run_corpus(tmp_path, str(Path(sys.executable).parent / "majob"))
    assert [r.case for r in rows] == [c.name for c in CASES]
    missed = [f"{r.case}: expected {r.expected}, found {r.found}" for r in rows if not r.ok]
    assert not missed, "\n".join(missed)

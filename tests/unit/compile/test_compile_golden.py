"""Golden files: every spec in tests/golden/compile/specs compiled for every stage.

Regenerate after an intended change with ``UPDATE_GOLDEN=1 pytest tests/unit/compile``: each
file that changes is rewritten and its test fails, saying so, so that a regenerating run never
passes; review the diff (the golden files are what ModelArts receives) and run again without
the variable. Under CI (``CI`` set) the variable is refused.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from majob.compile import to_estimator, to_rest_body
from majob.spec.models import STAGES, JobSpec, Stage

LoadCase = Callable[[str], JobSpec]


def _check(path: Path, actual: str) -> None:
    if os.environ.get("UPDATE_GOLDEN") == "1":
        if os.environ.get("CI", "").lower() not in ("", "0", "false"):
            pytest.fail("UPDATE_GOLDEN=1 is refused under CI: golden files are checked there")
        if not path.exists() or path.read_text(encoding="utf-8") != actual:
            path.write_text(actual, encoding="utf-8")
            pytest.fail(f"rewrote {path.name}: review the diff, then run without UPDATE_GOLDEN")
    assert path.exists(), f"{path.name} is missing: run UPDATE_GOLDEN=1 pytest {__file__}"
    assert actual == path.read_text(encoding="utf-8"), (
        f"{path.name} differs; if the change is intended, regenerate with UPDATE_GOLDEN=1"
    )


def _json(data: object) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


@pytest.mark.parametrize("stage", STAGES)
def test_rest_body_matches_golden(
    case: str, stage: Stage, load_case: LoadCase, golden_dir: Path
) -> None:
    body = to_rest_body(load_case(case), stage)
    _check(golden_dir / f"{case}.{stage}.rest.json", _json(body))


@pytest.mark.parametrize("stage", STAGES)
def test_estimator_json_matches_golden(
    case: str, stage: Stage, load_case: LoadCase, golden_dir: Path
) -> None:
    call = to_estimator(load_case(case), stage)
    _check(golden_dir / f"{case}.{stage}.sdk.json", _json(call.to_json()))


@pytest.mark.parametrize("stage", STAGES)
def test_estimator_snippet_matches_golden(
    case: str, stage: Stage, load_case: LoadCase, golden_dir: Path
) -> None:
    call = to_estimator(load_case(case), stage)
    _check(golden_dir / f"{case}.{stage}.sdk.py", call.to_python())


def test_every_golden_file_has_a_spec(golden_dir: Path) -> None:
    """A golden file left behind by a renamed or deleted spec would never be checked."""
    specs = {p.stem for p in (golden_dir / "specs").glob("*.yaml")}
    orphans = [
        p.name for p in golden_dir.iterdir() if p.is_file() and p.name.split(".", 1)[0] not in specs
    ]
    assert orphans == []


def test_regenerating_never_passes_silently(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    golden = tmp_path / "case.formal.rest.json"
    golden.write_text("old\n")
    monkeypatch.setenv("UPDATE_GOLDEN", "1")
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.fail.Exception, match=r"rewrote case\.formal\.rest\.json"):
        _check(golden, "new\n")
    assert golden.read_text() == "new\n"
    _check(golden, "new\n")  # nothing to rewrite: checked, passes
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match="refused under CI"):
        _check(golden, "newer\n")
    assert golden.read_text() == "new\n"

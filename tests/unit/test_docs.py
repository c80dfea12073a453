"""What the README and docs/ name must exist: the bundled specs and examples they run, and the
rule ids the checker really has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from majob.migrate.rules import RULES

ROOT = Path(__file__).resolve().parents[2]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


@pytest.mark.parametrize("page", PAGES, ids=lambda p: p.name)
def test_every_bundled_spec_and_example_a_page_names_exists(page: Path) -> None:
    text = page.read_text(encoding="utf-8")
    named = set(re.findall(r"\b((?:job_specs|examples)/[A-Za-z0-9_./-]*[A-Za-z0-9_])", text))
    missing = sorted(path for path in named if not (ROOT / path).exists())
    assert missing == [], f"{page.name} names files that do not exist: {missing}"


def test_the_readme_states_the_checkers_real_rule_range() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    (stated,) = re.findall(r"rule ids \((MA\d{3})-(MA\d{3})\)", text)
    assert stated == (min(RULES), max(RULES))


def test_the_checklist_table_says_how_the_precision_item_is_decided() -> None:
    text = (ROOT / "docs" / "pipeline.md").read_text(encoding="utf-8")
    (row,) = [line for line in text.splitlines() if line.startswith("| precision checked")]
    # majob/pipeline/checklist.py: done or todo from the last recorded `majob compare`.
    assert "majob compare" in row and "`done`" in row and "`todo`" in row

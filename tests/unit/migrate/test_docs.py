"""docs/migrate.md documents every rule and every codemod, with the table's current texts."""

from __future__ import annotations

from pathlib import Path

from majob.migrate.rules import RULES, Codemod

DOC = (Path(__file__).resolve().parents[3] / "docs" / "migrate.md").read_text(encoding="utf-8")


def test_every_rule_is_in_the_table_as_defined() -> None:
    for rule in RULES.values():
        row = next((line for line in DOC.splitlines() if line.startswith(f"| {rule.id} |")), None)
        assert row is not None, rule.id
        assert f"| {rule.name} | {rule.severity.label} |" in row
        assert rule.summary in row


def test_every_codemod_is_described() -> None:
    for codemod in Codemod:
        assert f"- **`{codemod.value}`**" in DOC

"""The labelled corpus: the checker's floor per rule, and every chain of rewrites on every script
(the output parses, a second pass changes nothing, and the check after it finds nothing
auto-fixable and nothing the rewrites introduced)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from majob.migrate.checker import check_source
from majob.migrate.quality import score
from majob.migrate.rewrite import migrate_source
from majob.migrate.rules import Codemod, Target

CORPUS = Path(__file__).resolve().parents[2] / "migrate_corpus"
SCRIPTS = sorted(CORPUS.glob("*.py"))
CHAINS = [
    (Codemod.CLOUD_PATHS, Codemod.DDP, Codemod.NPU_MANUAL),
    (Codemod.CLOUD_PATHS, Codemod.DDP, Codemod.NPU_AUTO),
]
FLOOR = 0.95


def test_the_corpus_is_big_enough() -> None:
    assert len(SCRIPTS) >= 12


def test_recall_and_precision_per_rule_hold_the_floor() -> None:
    scores = score(CORPUS)
    low = {
        rule: (scores.recall(rule), scores.precision(rule))
        for rule in scores.rules()
        if scores.recall(rule) < FLOOR or scores.precision(rule) < FLOOR
    }
    assert low == {}, {rule: scores.by_rule[rule] for rule in low}
    assert scores.control_errors == []


def _rules(source: str, name: str) -> set[str]:
    return {f.rule for f in check_source(source, name, Target.NPU).findings}


@pytest.mark.parametrize("chain", CHAINS, ids=lambda c: "+".join(m.value for m in c))
@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_every_chain_parses_is_idempotent_and_leaves_nothing_fixable(
    script: Path, chain: tuple[Codemod, ...]
) -> None:
    original = script.read_text(encoding="utf-8")
    before = _rules(original, script.name)
    source = original
    for codemod in chain:
        source, missed = migrate_source(source, codemod, script.name)
        assert missed == [], (codemod, missed)
        ast.parse(source)
        again, _ = migrate_source(source, codemod, script.name)
        assert again == source, codemod
    report = check_source(source, script.name, Target.NPU)
    fixable = [(f.line, f.rule) for f in report.findings if set(f.fixed_by) & set(chain)]
    assert fixable == []
    introduced = {f.rule for f in report.findings} - before
    assert introduced == set()


TESTS = Path(__file__).resolve().parents[2]
# every script cloud-paths has been seen to rewrite: the corpus (projects too), the held-out
# scripts and the golden inputs
GOLDEN_INPUTS = (TESTS / "golden" / "migrate").glob("*/*.before.py")
REWRITTEN = sorted(
    [*CORPUS.rglob("*.py"), *(TESTS / "migrate_heldout").glob("*.py"), *GOLDEN_INPUTS]
)


def _channels_read(tree: ast.AST) -> set[str]:
    """The channel arguments the script reads: ``args.data_url`` anywhere (a declaration names
    the flag as a string, so it does not count)."""
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and node.attr in ("data_url", "train_url")
    }


@pytest.mark.parametrize("script", REWRITTEN, ids=lambda p: str(p.relative_to(TESTS)))
def test_every_channel_argument_cloud_paths_adds_is_read(script: Path) -> None:
    """An argument nothing reads silences MA103 while the script still reads and writes the
    working directory: a channel is added only with the reads or writes moved to it."""
    before = script.read_text(encoding="utf-8")
    after, _ = migrate_source(before, Codemod.CLOUD_PATHS, script.name)
    added = {
        channel
        for channel in ("data_url", "train_url")
        if after.count(f'"--{channel}"') > before.count(f'"--{channel}"')
    }
    assert added - _channels_read(ast.parse(after)) == set()


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_text_splicing_writes_what_libcst_writes(
    script: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from majob.migrate import splice

    source = script.read_text(encoding="utf-8")
    for codemod in Codemod:
        spliced, _ = migrate_source(source, codemod, script.name)
        with monkeypatch.context() as patch:
            patch.setattr(splice, "_apply_as_text", lambda *_: None)  # libcst for every edit
            through_libcst, _ = migrate_source(source, codemod, script.name)
        assert spliced == through_libcst, codemod


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.stem)
def test_resume_after_cloud_paths_parses_is_idempotent_and_leaves_nothing_fixable(
    script: Path,
) -> None:
    """``--to resume`` runs after ``cloud-paths`` (the folder is then under --train_url)."""
    source, _ = migrate_source(script.read_text(encoding="utf-8"), Codemod.CLOUD_PATHS)
    before = _rules(source, script.name)
    after, missed = migrate_source(source, Codemod.RESUME, script.name)
    assert missed == []
    ast.parse(after)
    assert migrate_source(after, Codemod.RESUME, script.name)[0] == after
    report = check_source(after, script.name, Target.NPU)
    assert [(f.line, f.rule) for f in report.findings if Codemod.RESUME in f.fixed_by] == []
    assert {f.rule for f in report.findings} - before == set()

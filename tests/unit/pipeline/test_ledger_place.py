"""The ledger does not depend on where a command runs: it is at the spec's project root (the
git work tree holding the spec, else the spec's directory), and ``majob history`` says where."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.pipeline.ledger import LEDGER_VARIABLE, default_ledger_path
from majob.pipeline.project import project_root


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delenv(LEDGER_VARIABLE)
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "job_specs").mkdir()
    (root / "examples" / "mnist").mkdir(parents=True)
    return root


def test_a_spec_in_a_git_work_tree_uses_the_ledger_at_its_top(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = repo / "job_specs" / "mnist.yaml"
    for where in (repo, repo / "examples" / "mnist"):
        monkeypatch.chdir(where)
        assert default_ledger_path(spec) == repo / ".majob" / "ledger.db"


def test_a_worktree_whose_git_is_a_file_counts_too(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: elsewhere\n")
    (tmp_path / "wt" / "specs").mkdir()
    assert project_root(tmp_path / "wt" / "specs" / "a.yaml") == tmp_path / "wt"
    assert project_root(tmp_path / "wt" / "specs") == tmp_path / "wt"


def test_outside_git_the_specs_directory_holds_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(LEDGER_VARIABLE)
    (tmp_path / "plain").mkdir()
    spec = tmp_path / "plain" / "spec.yaml"
    spec.write_text("name: x\n")
    monkeypatch.chdir(tmp_path)
    assert default_ledger_path(spec) == tmp_path / "plain" / ".majob" / "ledger.db"


def test_majob_ledger_still_names_another(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LEDGER_VARIABLE, str(tmp_path / "shared.db"))
    assert default_ledger_path(tmp_path / "spec.yaml") == tmp_path / "shared.db"


def test_history_from_a_subdirectory_says_which_ledger(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(repo / "examples" / "mnist")
    result = CliRunner().invoke(app, ["history"])
    assert result.exit_code == 0, result.output
    assert result.output == f"no stage has run yet ({repo / '.majob' / 'ledger.db'})\n"

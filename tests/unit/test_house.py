"""The house's sizes and its front door (docs/architecture.md).

The floors themselves are import-linter's contract in pyproject.toml (``make lint``); what it
cannot say is said here: a module fits on a few screens, a function on one, and no module of
the package goes through the façade (``majob/__init__.py``), which would tie every floor to
all the others.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "majob"
MODULE_LINES = 400
FUNCTION_LINES = 60
SOURCES = sorted(PACKAGE.rglob("*.py"))


def _name(path: Path) -> str:
    return str(path.relative_to(PACKAGE.parent))


@pytest.mark.parametrize("path", SOURCES, ids=_name)
def test_a_module_and_its_functions_are_small(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    assert len(text.splitlines()) <= MODULE_LINES, f"{_name(path)}: split it by purpose"
    long = [
        f"{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > FUNCTION_LINES
    ]
    assert not long, f"{_name(path)}: {', '.join(long)}"


def _facade_imports(tree: ast.AST, submodules: set[str]) -> list[str]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [alias.name for alias in node.names if alias.name == "majob"]
        elif isinstance(node, ast.ImportFrom) and node.module == "majob" and node.level == 0:
            found += [f"majob.{a.name}" for a in node.names if a.name not in submodules]
    return found


def test_no_module_imports_the_facade() -> None:
    submodules = {p.stem for p in PACKAGE.glob("*.py")} | {
        p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()
    }
    offenders = {
        _name(path): names
        for path in SOURCES
        if path.name != "__init__.py" or path.parent != PACKAGE
        if (names := _facade_imports(ast.parse(path.read_text(encoding="utf-8")), submodules))
    }
    assert offenders == {}


def test_the_facade_check_sees_a_facade_import() -> None:
    tree = ast.parse("import majob\nfrom majob import display, load_spec\n")
    assert _facade_imports(tree, {"display"}) == ["majob", "majob.load_spec"]

"""The emulator is a separate service: nothing under ``majob/emulator/`` reaches the client's
spec model, services, compilers, pipeline or CLI, directly or through anything it imports.

Checked on the source (``ast``), so every import counts: at the top, inside functions and under
``TYPE_CHECKING``. A client and the emulator agree because a test says so (the catalogue, the
state file), never because they share the client's code.
"""

from __future__ import annotations

import ast
from collections import deque
from pathlib import Path

import majob

PACKAGE = Path(majob.__file__).parent
FORBIDDEN = ("majob.spec", "majob.service", "majob.compile", "majob.pipeline", "majob.cli")


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_by(path: Path, name: str, modules: set[str]) -> set[str]:
    """The majob modules ``path`` (module ``name``) imports, wherever the import statement is;
    ``from package import module`` imports that module, ``from module import name`` the
    module."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.rsplit(".", node.level - 1)[0] if node.level > 1 else package
                base = f"{anchor}.{base}" if base else anchor
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                found.add(submodule if submodule in modules else base)
    return {m for m in found if m == "majob" or m.startswith("majob.")}


def import_graph() -> dict[str, set[str]]:
    modules = {module_name(p): p for p in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        targets = set()
        for target in imported_by(path, name, set(modules)):
            # Importing majob.a.b runs majob/a/__init__ too; majob/__init__ (the façade, whose
            # imports are lazy) counts only where a module imports ``majob`` itself, as
            # import-linter counts it.
            parts = target.split(".")
            prefixes = (".".join(parts[:i]) for i in range(2, len(parts) + 1))
            targets.update(prefix for prefix in prefixes if prefix in modules)
            if target == "majob":
                targets.add(target)
        graph[name] = targets - {name}
    return graph


def chain_to(graph: dict[str, set[str]], start: str, banned: tuple[str, ...]) -> list[str] | None:
    """The first import chain from ``start`` to a module under ``banned`` (breadth first)."""
    came_from: dict[str, str | None] = {start: None}
    queue = deque([start])
    while queue:
        module = queue.popleft()
        if module.startswith(banned) or module in banned:
            chain = [module]
            while (previous := came_from[chain[-1]]) is not None:
                chain.append(previous)
            return chain[::-1]
        for target in sorted(graph.get(module, ())):
            if target not in came_from:
                came_from[target] = module
                queue.append(target)
    return None


def test_the_graph_sees_imports_inside_functions() -> None:
    graph = import_graph()
    # ``majob.emulator.obs_command`` imports the serving code only when the command runs.
    assert "majob.emulator.obs.standalone" in graph["majob.emulator.obs_command"]


def test_nothing_in_the_emulator_reaches_the_client() -> None:
    graph = import_graph()
    banned = tuple(f"{name}." for name in FORBIDDEN) + FORBIDDEN
    emulator = sorted(m for m in graph if m.startswith("majob.emulator"))
    assert len(emulator) > 40  # the walk found the package
    chains = {m: chain for m in emulator if (chain := chain_to(graph, m, banned))}
    assert chains == {}, "\n".join(" -> ".join(chain) for chain in chains.values())

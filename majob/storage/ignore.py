"""The one set of ignore rules for the code upload and the local stage's code copy.

Rules, in order, later ones winning (gitignore semantics, negation with ``!``):
built-in defaults (VCS dirs, caches), ``.gitignore`` files at every level (each applies below its
own directory), ``.majobignore`` files (same, read after ``.gitignore`` so they can override it),
then the spec's ``code.ignore`` patterns (relative to the code root). Symlinks that point out of
the tree are never followed; symlinked directories are not walked.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pathspec

DEFAULT_IGNORES: tuple[str, ...] = (
    ".git/",
    ".hg/",
    ".svn/",
    "__pycache__/",
    "*.pyc",
    ".majob/",
    ".venv/",
    ".mypy_cache/",
    ".pytest_cache/",
    ".ruff_cache/",
    ".ipynb_checkpoints/",
    ".DS_Store",
)
IGNORE_FILES: tuple[str, ...] = (".gitignore", ".majobignore")


@dataclass(frozen=True)
class _Scoped:
    base: str  # directory (relative, "" for the root, else ending with "/") the rules apply below
    spec: pathspec.PathSpec[Any]


def _read_rules(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class IgnoreRules:
    """Decides for a relative POSIX path (``dir/`` for directories) whether it is left out."""

    def __init__(self, root: Path, extra_patterns: Iterable[str] = ()) -> None:
        self.root = root
        self._scoped: list[_Scoped] = [_Scoped("", self._spec(DEFAULT_IGNORES))]
        self._extra = _Scoped("", self._spec(extra_patterns))

    @staticmethod
    def _spec(lines: Iterable[str]) -> pathspec.PathSpec[Any]:
        return pathspec.PathSpec.from_lines("gitignore", lines)

    def enter(self, rel_dir: str) -> int:
        """Read the ignore files of ``rel_dir`` (``""`` or ``a/b/``); returns how many scopes
        to drop with ``leave`` when the walk leaves the directory."""
        added = 0
        for name in IGNORE_FILES:
            lines = _read_rules(self.root / rel_dir / name)
            if lines:
                self._scoped.append(_Scoped(rel_dir, self._spec(lines)))
                added += 1
        return added

    def leave(self, count: int) -> None:
        if count:
            del self._scoped[-count:]

    def ignored(self, rel_path: str) -> bool:
        """Whether ``rel_path`` (``dir/`` for directories) is ignored; the last match wins."""
        verdict = False
        for scope in (*self._scoped, self._extra):
            if not rel_path.startswith(scope.base):
                continue
            result = scope.spec.check_file(rel_path[len(scope.base) :])
            if result.include is not None:
                verdict = result.include
        return verdict


def walk_files(root: Path, extra_patterns: Iterable[str] = ()) -> Iterator[str]:
    """Yield the relative POSIX paths of the files under ``root`` that are not ignored, sorted
    per directory. Symlinked files are yielded only when they resolve inside ``root``."""
    root = root.resolve()
    rules = IgnoreRules(root, extra_patterns)

    def walk(rel_dir: str) -> Iterator[str]:
        scopes = rules.enter(rel_dir)
        try:
            with os.scandir(root / rel_dir) as entries:
                ordered = sorted(entries, key=lambda e: e.name)
            for entry in ordered:
                rel = rel_dir + entry.name
                if entry.is_dir(follow_symlinks=False):
                    if not rules.ignored(rel + "/"):
                        yield from walk(rel + "/")
                elif entry.is_file(follow_symlinks=True):
                    if entry.is_symlink() and not _inside(root, Path(entry.path)):
                        continue
                    if not rules.ignored(rel):
                        yield rel
        finally:
            rules.leave(scopes)

    yield from walk("")


def _inside(root: Path, path: Path) -> bool:
    try:
        path.resolve().relative_to(root)
    except ValueError:
        return False
    return True

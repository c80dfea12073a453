"""The one set of ignore rules for the code upload and the local stage's code copy.

Rules, in order, later ones winning (gitignore semantics, negation with ``!``):
built-in defaults (VCS dirs, caches), ``.gitignore`` files at every level (each applies below its
own directory), ``.majobignore`` files (same, read after ``.gitignore`` so they can override it),
then the spec's ``code.ignore`` patterns (relative to the code root). Symlinks that point out of
the tree are never followed; symlinked directories are not walked.

Files whose name usually holds a secret (``SECRET_PATTERNS``: ``.env``, ``id_rsa``, ``*.pem``...)
are left out too, and reported, unless the caller allows them (``--allow-secrets``) or the user
names them in an un-ignore rule of their own (``!.env`` in ``.majobignore`` or ``code.ignore``;
a ``.gitignore`` rule says what git tracks, not what may go to the cloud).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from majob.text import printable

if TYPE_CHECKING:
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
MAJOB_IGNORE = ".majobignore"

# Names that usually hold secrets; matched against each file's base name.
SECRET_PATTERNS: tuple[str, ...] = (
    ".env",
    ".env.*",
    "*.pem",
    "*.key",
    "*.p12",
    "*.pfx",
    "*.keystore",
    "*.jks",
    "id_rsa*",
    "id_dsa*",
    "id_ecdsa*",
    "id_ed25519*",
    "credentials*",
    ".netrc",
    ".pgpass",
    ".pypirc",
    ".npmrc",
    ".git-credentials",
    "*.tfstate",
)


# One regex for all of them: a scan calls this for every file (2,000 x 19 fnmatch calls cost
# ~0.1 s of a no-change sync).
_SECRET_NAME = re.compile("|".join(fnmatch.translate(pattern) for pattern in SECRET_PATTERNS))


def looks_secret(rel: str) -> bool:
    """Whether the file's name is one that usually holds a secret (``.env``, ``id_rsa``...)."""
    return _SECRET_NAME.match(rel.rsplit("/", 1)[-1]) is not None


def head_of(names: Sequence[str], shown: int = 5) -> str:
    """``a, b, c and 4 more``."""
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(printable(name) for name in names[:shown]) + more


def withheld_line(names: Sequence[str], what: str) -> str:
    """The one line that says which files that look like secrets were left out of ``what``."""
    count = f"{len(names)} file" + ("s" if len(names) != 1 else "")
    return (
        f"left out of the {what} {count} that may hold secrets: {head_of(names)} "
        f"(--allow-secrets, or a '!{printable(names[0])}' line in .majobignore, keeps them)"
    )


class _Verdict(NamedTuple):
    include: bool | None  # pathspec's word: True when a rule ignores the path, None when none says


class _DefaultRules:
    """``DEFAULT_IGNORES`` without pathspec: each is one name or glob with no slash inside, which
    in gitignore matches any one segment of the path (a directory's, with a trailing ``/``,
    also everything under it). So a walk of a tree with no ignore file of its own (a subfolder,
    a single project) does not import pathspec (~15 ms of every ``majob check DIR``)."""

    def __init__(self, patterns: Sequence[str]) -> None:
        self._any = _one_of(p for p in patterns if not p.endswith("/"))
        self._dirs = _one_of(p[:-1] for p in patterns if p.endswith("/"))

    def check_file(self, rel_path: str) -> _Verdict:
        segments = rel_path.rstrip("/").split("/")
        folders = segments if rel_path.endswith("/") else segments[:-1]
        hit = any(self._any.match(s) for s in segments) or any(self._dirs.match(s) for s in folders)
        return _Verdict(True if hit else None)


def _one_of(globs: Iterable[str]) -> re.Pattern[str]:
    """One regular expression for a segment matching any of ``globs`` (none: matches nothing)."""
    return re.compile("|".join(fnmatch.translate(g) for g in globs) or "(?!)")


_DEFAULTS = _DefaultRules(DEFAULT_IGNORES)


@dataclass(frozen=True)
class _Scoped:
    base: str  # directory (relative, "" for the root, else ending with "/") the rules apply below
    spec: pathspec.PathSpec[Any] | _DefaultRules
    own: bool = False  # majob's own rules (.majobignore, code.ignore): they may let a secret in


def _read_rules(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return []


class IgnoreRules:
    """Decides for a relative POSIX path (``dir/`` for directories) whether it is left out."""

    def __init__(self, root: Path, extra_patterns: Iterable[str] = ()) -> None:
        self.root = root
        self._scoped: list[_Scoped] = [_Scoped("", _DEFAULTS)]
        extra = list(extra_patterns)
        self._extra = _Scoped("", self._spec(extra), own=True) if extra else None

    @staticmethod
    def _spec(lines: Iterable[str]) -> pathspec.PathSpec[Any]:
        import pathspec  # only for a tree with ignore rules of its own

        return pathspec.PathSpec.from_lines("gitignore", lines)

    def enter(self, rel_dir: str) -> int:
        """Read the ignore files of ``rel_dir`` (``""`` or ``a/b/``); returns how many scopes
        to drop with ``leave`` when the walk leaves the directory."""
        added = 0
        for name in IGNORE_FILES:
            lines = _read_rules(self.root / rel_dir / name)
            if lines:
                self._scoped.append(_Scoped(rel_dir, self._spec(lines), own=name == MAJOB_IGNORE))
                added += 1
        return added

    def leave(self, count: int) -> None:
        if count:
            del self._scoped[-count:]

    def _scopes(self) -> list[_Scoped]:
        return [*self._scoped, self._extra] if self._extra is not None else self._scoped

    def ignored(self, rel_path: str) -> bool:
        """Whether ``rel_path`` (``dir/`` for directories) is ignored; the last match wins."""
        verdict = False
        for scope in self._scopes():
            if not rel_path.startswith(scope.base):
                continue
            result = scope.spec.check_file(rel_path[len(scope.base) :])
            if result.include is not None:
                verdict = result.include
        return verdict

    def let_in(self, rel_path: str) -> bool:
        """Whether majob's own rules name ``rel_path`` in an un-ignore (``!``) rule last."""
        verdict = False
        for scope in self._scopes():
            if not scope.own or not rel_path.startswith(scope.base):
                continue
            result = scope.spec.check_file(rel_path[len(scope.base) :])
            if result.include is not None:
                verdict = result.include is False
        return verdict


def walk_files(
    root: Path,
    extra_patterns: Iterable[str] = (),
    *,
    allow_secrets: bool = False,
    on_withheld: Callable[[str], None] | None = None,
) -> Iterator[str]:
    """Yield the relative POSIX paths of the files under ``root`` that are not ignored, sorted
    per directory. Symlinked files are yielded only when they resolve inside ``root``. A file
    that looks like a secret is left out (and passed to ``on_withheld``) unless
    ``allow_secrets`` or an un-ignore rule of ``.majobignore``/``extra_patterns`` names it."""
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
                    if rules.ignored(rel):
                        continue
                    if looks_secret(rel) and not allow_secrets and not rules.let_in(rel):
                        if on_withheld is not None:
                            on_withheld(rel)
                        continue
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

"""Where a spec's project is, so that what majob records about it does not depend on the
directory a command runs from.

The project root is the git work tree that holds the spec (the directory with ``.git``, a
directory or, in a worktree or submodule, a file), else the spec's own directory. The ledger
lives in ``.majob/`` there: ``majob submit`` run from ``examples/`` and ``majob pipeline`` run
from the top of the repository write to the same ledger.
"""

from __future__ import annotations

from pathlib import Path


def project_root(start: Path) -> Path:
    """The git work tree holding ``start`` (a file or a directory), else ``start``'s directory."""
    place = start.resolve()
    directory = place if place.is_dir() else place.parent
    for candidate in (directory, *directory.parents):
        if (candidate / ".git").exists():
            return candidate
    return directory

"""The project's own modules, for checks that cross files: a literal handed to a helper defined in
another file of the checked directory (timm's ``utils.get_outdir("./output/train")``) is a path
when that helper's parameter reaches a path position there.

A directory check runs in two steps: every file once, each report keeping what its functions do
with their parameters (``FileReport.exports``) and which imported helpers it hands literals to
(``FileReport.imported``); then only the files that hand a literal to a helper of the project
are checked again with this index, so most files are parsed once.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

# function -> (its positional parameters, its keyword-only ones, parameter -> "input"/"output")
Exports = dict[str, tuple[list[str], list[str], dict[str, str]]]


Helper = tuple[list[str], list[str], dict[str, str]]


@dataclass
class ProjectIndex:
    """The helpers of a project by name, each with the module it is in (``pkg.utils``) and what
    it does with each path."""

    functions: dict[str, list[tuple[str, Helper]]] = field(default_factory=dict)

    def add(self, module: str, exports: Exports) -> None:
        for function, helper in exports.items():
            self.functions.setdefault(function, []).append((module, helper))

    def helper(self, qualname: str) -> Helper | None:
        """The helper ``qualname`` (``pkg.utils.get_outdir``) names, if the project has it: the
        module may be named from the project's root or from a folder above it."""
        module, _, function = qualname.rpartition(".")
        for name, helper in self.functions.get(function, ()):
            if module and (
                name == module or name.endswith("." + module) or module.endswith("." + name)
            ):
                return helper
        return None

    def knows_any(self, qualnames: Iterable[str]) -> bool:
        return any(self.helper(q) is not None for q in qualnames)


def module_name(root: Path, path: Path) -> str:
    """``pkg/utils.py`` under ``root`` -> ``pkg.utils``; ``pkg/__init__.py`` -> ``pkg``."""
    try:
        rel = path.relative_to(root)
    except ValueError:
        rel = Path(path.name)
    parts = list(rel.with_suffix("").parts)
    if parts and parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)

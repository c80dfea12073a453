"""``majob migrate``: run the checker, apply the planned fixes of one codemod, diff or write.

libcst is imported only through ``majob.migrate.splice``, and only for a statement whose fixes
are more than text edits, so nothing but ``majob migrate`` pays for it, and only when it must.
"""

from __future__ import annotations

import difflib
import os
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path

from majob.errors import MigrationError
from majob.migrate.checker import (
    check_source,
    cycle_collection_paused,
    project_index,
    python_files,
    read_source,
)
from majob.migrate.findings import FileReport, Finding, Fix
from majob.migrate.project import ProjectIndex
from majob.migrate.rules import RULES, Codemod, Target
from majob.migrate.workers import file_sizes, map_in_workers, worker_count

_BOM = "\ufeff"


@dataclass
class FileChange:
    """One file a codemod changed (or would change)."""

    path: Path
    display: str
    before: str
    after: str
    fixes: int
    missed: list[Fix] = field(default_factory=list)
    backup: Path | None = None

    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.before.splitlines(keepends=True),
            self.after.splitlines(keepends=True),
            fromfile=f"a/{self.display.lstrip('/')}",
            tofile=f"b/{self.display.lstrip('/')}",
        )
        return "".join(line if line.endswith("\n") else line + "\n" for line in lines)


@dataclass
class MigrationResult:
    """What a migration did: the changed files and the files it could not read or parse."""

    codemod: Codemod
    changes: list[FileChange] = field(default_factory=list)
    skipped: list[str] = field(default_factory=list)
    files: int = 0
    # findings of the rules this codemod fixes that it left here (MA401 where the pattern is not
    # clear): their messages say why
    left: list[Finding] = field(default_factory=list)


def target_of(codemod: Codemod) -> Target:
    return Target.NPU if codemod in (Codemod.NPU_AUTO, Codemod.NPU_MANUAL) else Target.GPU


def checked(
    source: str, path: str, codemod: Codemod, project: ProjectIndex | None = None
) -> tuple[str, FileReport]:
    """The text a codemod works on and its report: ``source``, or, when its only syntax errors
    are ones with a fix (Python 2 era ``async=True``), ``source`` with them fixed."""
    report = check_source(source, path, target_of(codemod), project=project)
    if report.repaired_source is not None:
        source = report.repaired_source
        report = check_source(source, path, target_of(codemod), project=project)
    return source, report


def migrate_source(source: str, codemod: Codemod, path: str = "<string>") -> tuple[str, list[Fix]]:
    """``source`` after ``codemod``, and the planned fixes that could not be applied."""
    original = source
    source, report = checked(source, path, codemod)
    fixes = report.fixes_for(codemod)
    if not report.parsed:
        return original, []
    if not fixes:
        return source, []
    from majob.migrate.splice import apply_fixes

    return apply_fixes(source, fixes, report.top_level)


_Outcome = tuple["FileChange | None", "str | None", FileReport | None]


def plan(paths: Iterable[Path], codemod: Codemod, jobs: int | None = None) -> MigrationResult:
    """Every change ``codemod`` would make under ``paths`` (nothing is written), in ``jobs``
    processes (None: one per CPU for a large tree, as ``majob check``). A file that hands a
    literal to a helper of another checked file is planned again knowing the helper."""
    paths = list(paths)
    files = list(python_files(paths))
    sizes = file_sizes([path for path, _ in files])
    workers = worker_count(jobs, sizes)
    with cycle_collection_paused():
        outcomes = map_in_workers(partial(_plan_file, codemod=codemod), files, workers, sizes)
        reports = [
            report or FileReport(shown)
            for (_, _, report), (_, shown) in zip(outcomes, files, strict=True)
        ]
        index = project_index(paths, files, reports)
        for number, report in enumerate(reports):
            if report.imported and index.knows_any(report.imported):
                outcomes[number] = _plan_file(files[number], codemod, index)
    result = MigrationResult(codemod, files=len(files))
    for change, skipped, planned in outcomes:
        result.left.extend(planned.findings if planned is not None else [])
        if change is not None:
            result.changes.append(change)
        if skipped is not None:
            result.skipped.append(skipped)
    return result


def _plan_file(
    listed: tuple[Path, str], codemod: Codemod, project: ProjectIndex | None = None
) -> _Outcome:
    """The change ``codemod`` makes to one file, or why the file was skipped, and its report."""
    path, display = listed
    try:
        source = read_source(path)
    except OSError as error:
        return None, f"{display}: cannot read ({error.strerror or error})", None
    if source is None:
        return None, f"{display}: not UTF-8 text", None
    original = source
    source, full = checked(source, display, codemod, project)
    # what the project index needs, not the findings: the outcome crosses processes
    left = [
        f for f in full.findings if codemod in RULES[f.rule].fixed_by and codemod not in f.fixed_by
    ]
    report = FileReport(display, left, exports=full.exports, imported=full.imported)
    if not full.parsed:
        # the error no codemod repairs is why the file is skipped, not the first one
        errors = [f for f in full.findings if f.rule == "MA000"]
        finding = next((f for f in errors if not f.fixed_by), errors[0])
        return None, f"{display}:{finding.line}:{finding.col}: {finding.message}", report
    fixes = full.fixes_for(codemod)
    if not fixes:
        if source != original:  # only the syntax fixes
            return FileChange(path, display, original, source, 0), None, report
        return None, None, report
    from majob.migrate.splice import apply_fixes

    try:
        after, missed = apply_fixes(source, fixes, full.top_level)
    except MigrationError as error:
        return None, f"{display}: {error.message}", report
    if after == original:
        return None, None, report
    return FileChange(path, display, original, after, len(fixes), missed), None, report


def _backup_path(path: Path) -> Path:
    candidate = path.with_name(path.name + ".orig")
    number = 1
    while candidate.exists():
        candidate = path.with_name(f"{path.name}.orig.{number}")
        number += 1
    return candidate


def write(result: MigrationResult) -> None:
    """Write every change, keeping the previous text as ``file.py.orig`` (never overwritten: a
    second migration's backup becomes ``file.py.orig.1``)."""
    for change in result.changes:
        raw = change.path.read_bytes()
        bom = _BOM if raw.startswith(_BOM.encode("utf-8")) else ""
        backup = _backup_path(change.path)
        backup.write_bytes(raw)
        change.backup = backup
        mode = change.path.stat().st_mode & 0o7777
        fd, tmp = tempfile.mkstemp(dir=change.path.parent, prefix=f".{change.path.name}.")
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(bom + change.after)
            os.chmod(tmp, mode)
            os.replace(tmp, change.path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise

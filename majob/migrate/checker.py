"""``majob check``: one pass of the stdlib ``ast`` per file feeds every rule.

``facts`` records what the pass sees (imports, argument parsers, path literals, loaders, loops,
saves, CUDA uses); then ``rules_paths``, ``rules_distributed``, ``rules_resume`` and (with
``--target npu``) ``rules_npu`` decide the findings from those facts, together with the ``Fix``
list that the codemods apply. Unparsable files become an ``MA000`` finding and are skipped.
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from functools import partial
from pathlib import Path

from majob.errors import UserInputError
from majob.migrate import syntax_repair
from majob.migrate.facts import FileFacts
from majob.migrate.findings import FileFindings, FileReport, Finding, Fix
from majob.migrate.project import ProjectIndex, module_name
from majob.migrate.rules import RULES, Codemod, Target
from majob.migrate.rules_distributed import check_distributed
from majob.migrate.rules_npu import check_npu
from majob.migrate.rules_paths import check_cloud_paths
from majob.migrate.rules_resume import check_resume
from majob.migrate.source_text import source_lines, top_level_ranges
from majob.migrate.workers import file_sizes, map_in_workers, worker_count

__all__ = [
    "check_file",
    "check_paths",
    "check_source",
    "python_files",
    "read_source",
    "source_lines",
]


# ---------------------------------------------------------------------- files


def check_source(
    source: str,
    path: str = "<string>",
    target: Target = Target.GPU,
    torch_version: tuple[int, int] | None = None,
    project: ProjectIndex | None = None,
    checkpoints: tuple[str, str] | None = None,
) -> FileReport:
    """Check one file's text; a syntax error becomes an ``MA000`` finding. ``torch_version``
    (of the target image) decides whether a missing ``import torch_npu`` is an error;
    ``project`` holds the helpers of the other files of its project; ``checkpoints`` is the
    spec's checkpoint folder as (output, folder)."""
    try:
        parsed = syntax_repair.parse(source, path)
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", None) or 1
        col = getattr(error, "offset", None) or 1
        detail = getattr(error, "msg", None) or str(error)
        message = f"skipped, cannot parse: {detail}"
        finding = Finding(path, line, col, "MA000", RULES["MA000"].severity, message)
        return FileReport(path, [finding], [], parsed=False)
    tree = parsed.tree
    facts = FileFacts(parsed.text, npu=target is Target.NPU)
    facts.project = project
    facts.collect(tree)
    out = FileFindings(path, target)
    _ma000_syntax_problems(parsed, out)
    check_cloud_paths(facts, out)
    check_distributed(facts, out)
    per_epoch = check_resume(facts, out, parsed.text, checkpoints)
    if facts.npu:
        check_npu(facts, out, torch_version)
    report = out.file_report()
    report.exports = _exports(facts)
    report.imported = list(dict.fromkeys(literal.callee for literal in facts.imported_literals))
    report.per_epoch_saves = len(per_epoch)
    if parsed.problems:
        report.parsed = False
        if all(p.repairable for p in parsed.problems):
            report.repaired_source = syntax_repair.repaired(source, parsed.problems)
    if report.fixes:  # the codemods apply them per top-level statement
        report.top_level = top_level_ranges(tree)
    return report


def _exports(facts: FileFacts) -> dict[str, tuple[list[str], list[str], dict[str, str]]]:
    """What this file's functions do with their parameters, for the project's other files."""
    kinds: dict[str, dict[str, str]] = {}
    for (function, param), kind in facts.path_params.items():
        kinds.setdefault(function, {})[param] = kind
    return {
        function: (
            facts.function_params.get(function, []),
            facts.keyword_params.get(function, []),
            params,
        )
        for function, params in kinds.items()
    }


def _ma000_syntax_problems(parsed: syntax_repair.Parsed, out: FileFindings) -> None:
    """Each syntax error; the rest of the file was checked (``syntax_repair``)."""
    for problem in parsed.problems:
        fixes = [
            Fix(codemod, "MA000", "replace-string", problem.span, old=problem.old, new=problem.new)
            for codemod in Codemod
            if problem.repairable
        ]
        out.report("MA000", problem.span, f"{problem.message}; the rest was checked", *fixes)


def read_source(path: Path) -> str | None:
    """The text of ``path`` (UTF-8, a BOM allowed), or None when it is not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def check_file(
    path: Path,
    display: str | None = None,
    target: Target = Target.GPU,
    torch_version: tuple[int, int] | None = None,
    project: ProjectIndex | None = None,
    checkpoints: tuple[str, str] | None = None,
) -> FileReport:
    """Check one file on disk; unreadable or non-UTF-8 files become ``MA000`` findings."""
    shown = display or str(path)
    try:
        source = read_source(path)
    except OSError as error:
        message = f"skipped, cannot read the file: {error.strerror or error}"
        return FileReport(
            shown, [Finding(shown, 1, 1, "MA000", RULES["MA000"].severity, message)], parsed=False
        )
    if source is None:
        message = "skipped: the file is not UTF-8 text"
        return FileReport(
            shown, [Finding(shown, 1, 1, "MA000", RULES["MA000"].severity, message)], parsed=False
        )
    return check_source(source, shown, target, torch_version, project, checkpoints)


def python_files(paths: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """Every ``.py`` file under ``paths`` (files as given, directories walked with the project's
    ignore rules), as ``(path, display name)``, in a stable order. Missing paths are an error."""
    paths = list(paths)
    for path in paths:  # every path is checked before any work starts
        if not path.exists():
            raise UserInputError(
                f"{path}: no such file or directory", hint="pass Python files or directories"
            )
    for path in paths:
        if path.is_file():
            yield path, str(path)
        elif path.is_dir():
            from majob.storage.ignore import walk_files  # pathspec: only to walk a directory

            for rel in sorted(walk_files(path)):
                if rel.endswith(".py"):
                    yield path / rel, str(path / rel)
        else:
            raise UserInputError(
                f"{path}: not a file or a directory", hint="pass Python files or directories"
            )


def check_paths(
    paths: Iterable[Path],
    target: Target = Target.GPU,
    torch_version: tuple[int, int] | None = None,
    jobs: int | None = None,
    checkpoints: tuple[str, str] | None = None,
) -> list[FileReport]:
    """Check every Python file under ``paths``, in ``jobs`` processes (None: one per CPU for a
    large tree, see ``workers``), the reports in a stable order; ``checkpoints``: the spec's
    checkpoint folder as (output, folder)."""
    paths = list(paths)
    files = list(python_files(paths))
    sizes = file_sizes([path for path, _ in files])
    workers = worker_count(jobs, sizes)
    check = partial(
        _check_listed, target=target, torch_version=torch_version, checkpoints=checkpoints
    )
    with cycle_collection_paused():  # forked workers inherit the pause
        reports = map_in_workers(check, files, workers, sizes)
        index = project_index(paths, files, reports)
        for number, report in enumerate(reports):
            if report.imported and index.knows_any(report.imported):
                # a literal handed to a helper of another file: checked again, knowing it
                reports[number] = _check_listed(
                    files[number], target, torch_version, index, checkpoints
                )
    return reports


def project_index(
    roots: list[Path], files: list[tuple[Path, str]], reports: list[FileReport]
) -> ProjectIndex:
    """The helpers the checked files define, by module name under the directory given."""
    index = ProjectIndex()
    folders = [root for root in roots if root.is_dir()]
    for (path, _), report in zip(files, reports, strict=True):
        root = next((r for r in folders if r in path.parents), path.parent)
        index.add(module_name(root, path), report.exports)
    return index


def _check_listed(
    listed: tuple[Path, str],
    target: Target,
    torch_version: tuple[int, int] | None,
    project: ProjectIndex | None = None,
    checkpoints: tuple[str, str] | None = None,
) -> FileReport:
    path, shown = listed
    return check_file(path, shown, target, torch_version, project, checkpoints)


@contextmanager
def cycle_collection_paused() -> Iterator[None]:
    """Pause Python's cycle collector for a pass over many files. Parsing allocates about ten
    AST nodes per source line, and every allocation counts toward the collector's thresholds,
    so it kept re-walking every live node: a fifth of a check's time. Trees and facts hold no
    cycles and are freed by reference counting as each file is done."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()


def parse_torch_version(text: str) -> tuple[int, int]:
    """``2.1`` / ``2.1.0`` / an engine version id (``pytorch_2.1.0-cann_8.0...``) -> (2, 1)."""
    match = re.search(r"(?:^|pytorch_|torch_)(\d+)\.(\d+)", text)
    if match is None:
        raise UserInputError(
            f"cannot read a torch version from {text!r}",
            hint="pass --torch-version like 2.1 (the torch of the target image)",
        )
    return int(match.group(1)), int(match.group(2))

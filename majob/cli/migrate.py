"""``majob check`` and ``majob migrate``: find what keeps a script off ModelArts, and fix it.

Only the rule tables are imported at start-up; the checker, the rewriter and libcst load inside
the command bodies.
"""

# No ``from __future__ import annotations`` here: Typer reads these commands' annotations at
# every start of ``majob check``, and each one written as a string costs it an ``eval``
# (callgrind: 11 M instructions, 3% of a check of one file).

import enum
import sys
from pathlib import Path
from typing import Annotated

import typer

from majob.cli.common import user_errors
from majob.errors import UserInputError
from majob.migrate.rules import Codemod, Severity, Target

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""


JobsOption = Annotated[
    int | None,
    typer.Option(
        "--jobs",
        "-j",
        min=1,
        help="Processes to work with (default: one per CPU for a large tree).",
    ),
]


class OutputFormat(str, enum.Enum):
    TEXT = "text"
    JSON = "json"
    SARIF = "sarif"


class FailOn(str, enum.Enum):
    NOTE = "note"
    WARNING = "warning"
    ERROR = "error"
    NEVER = "never"


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("majob")
    except PackageNotFoundError:
        return "0"


@commands.command("check")
@user_errors
def check(
    paths: Annotated[list[Path], typer.Argument(help="Python files or directories to check.")],
    target: Annotated[
        Target, typer.Option("--target", help="Hardware the code should run on (npu adds rules).")
    ] = Target.GPU,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="text for people; json or sarif for tools.")
    ] = OutputFormat.TEXT,
    fail_on: Annotated[
        FailOn, typer.Option("--fail-on", help="Exit 1 when a finding is at least this severe.")
    ] = FailOn.ERROR,
    torch_version: Annotated[
        str | None,
        typer.Option(
            "--torch-version",
            help="torch of the target image (e.g. 2.1): from 2.5 torch_npu loads itself.",
        ),
    ] = None,
    spec: Annotated[
        Path | None,
        typer.Option(
            "--spec",
            help="Job spec: its image engine version gives the torch version, its "
            "fault_tolerance.checkpoints the checkpoint folder (MA402).",
        ),
    ] = None,
    jobs: JobsOption = None,
) -> None:
    """Report what keeps training code from running on ModelArts (rule ids MA000-MA403)."""
    from majob.migrate.checker import check_paths, cycle_collection_paused, parse_torch_version
    from majob.migrate.report import all_findings, render_json, render_sarif, render_text

    version = parse_torch_version(torch_version) if torch_version else None
    checkpoints = None
    if spec is not None:
        from majob.spec.load import load_spec

        job = load_spec(spec)
        engine_version = job.image.version
        if version is None and engine_version:
            version = parse_torch_version(engine_version)
        output = job.fault_tolerance.checkpoint_output
        checkpoints = (output, job.fault_tolerance.checkpoint_folder) if output else None
    # The reports and their findings hold no cycles: a collection over them (~100,000 objects
    # for 100,000 lines) while the output is built would free nothing.
    with cycle_collection_paused():
        reports = check_paths(paths, target, version, jobs, checkpoints)
        if output_format is OutputFormat.JSON:
            sys.stdout.write(render_json(reports))
        elif output_format is OutputFormat.SARIF:
            sys.stdout.write(render_sarif(reports, _version()))
        else:
            sys.stdout.write(render_text(reports))
    if fail_on is not FailOn.NEVER:
        threshold = Severity.parse(fail_on.value)
        if any(f.severity >= threshold for f in all_findings(reports)):
            raise typer.Exit(1)


@commands.command("migrate")
@user_errors
def migrate(
    paths: Annotated[list[Path], typer.Argument(help="Python files or directories to rewrite.")],
    to: Annotated[Codemod, typer.Option("--to", help="Which migration to apply.")],
    diff: Annotated[
        bool, typer.Option("--diff", help="Print a unified diff and change nothing (default).")
    ] = False,
    write: Annotated[
        bool, typer.Option("--write", help="Rewrite the files, keeping FILE.orig backups.")
    ] = False,
    jobs: JobsOption = None,
) -> None:
    """Rewrite code with a libcst codemod that keeps formatting and comments (idempotent)."""
    if diff and write:
        raise UserInputError("--diff and --write exclude each other", hint="pick one")
    from majob.migrate import rewrite

    result = rewrite.plan(paths, to, jobs)
    for skipped in result.skipped:
        sys.stderr.write(f"skipped: {skipped}\n")
    for change in result.changes:
        for fix in change.missed:
            sys.stderr.write(
                f"warning: {change.display}:{fix.span.line}:{fix.span.col + 1}: {fix.rule} "
                "could not be applied; fix it by hand\n"
            )
    for left in result.left:
        sys.stderr.write(f"left: {left.path}:{left.line}:{left.col}: {left.rule} {left.message}\n")
    if write:
        rewrite.write(result)
        for change in result.changes:
            sys.stderr.write(f"rewrote {change.display} (backup: {change.backup})\n")
        verb = "changed"
    else:
        for change in result.changes:
            sys.stdout.write(change.diff())
        verb = "would change"
    from majob.text import counted

    fixes = sum(c.fixes for c in result.changes)
    sys.stderr.write(
        f"{to.value}: {len(result.changes)} of {counted(result.files, 'file')} {verb} "
        f"({counted(fixes, 'fix', 'fixes')})"
        f"{f', {len(result.skipped)} skipped' if result.skipped else ''}; "
        "`majob check` lists what needs a hand\n"
    )

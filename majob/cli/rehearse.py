"""``majob run SPEC --fail-at ...``: the resume rehearsal on the terminal (its runs' lines live,
then a summary: the three runs, what survived the restart, where it began, the final metrics).

rich is imported inside the functions: ``majob --help`` must not load it.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

import typer

if TYPE_CHECKING:
    from rich.table import Table

    from majob.pipeline.rehearsal import Rehearsal, RehearsalOptions
    from majob.spec.models import JobSpec

STYLES = {"passed": "green", "failed": "red"}


def run_rehearsal(
    spec: JobSpec,
    fail_at: str,
    node: int | None,
    compare_to: Path | None,
    expect_resume: bool,
    options: RehearsalOptions,
) -> None:
    """Rehearse, show the summary, exit 1 when a resume was demanded (``--expect-resume`` or
    the spec's ``expect: resumes: true``) and did not happen."""
    from majob.cli.jobtext import console, print_table
    from majob.pipeline.rehearsal import rehearse

    found = rehearse(spec, fail_at, node=node, compare_to=compare_to, options=options)
    shown = console()
    shown.print(f"\n[bold]Resume rehearsal[/]: {found.plan.describe()}")
    print_table(_runs_table(found))
    for line in summary_lines(found, spec):
        shown.print(line)
    demanded = expect_resume or spec.expect.resumes
    if demanded and not found.passed:
        why = "--expect-resume" if expect_resume else "the spec's expect.resumes"
        typer.echo(f"error: {why}: the restarted run did not resume as it must", err=True)
        raise typer.Exit(1)


def _runs_table(found: Rehearsal) -> Table:
    from rich.table import Table

    table = Table(box=None, header_style="bold", pad_edge=False)
    for column in ("RUN", "RUN ID", "RESULT", "TOOK"):
        table.add_column(column, no_wrap=True)
    killed_at = f"{found.fired_after:.1f}s"
    for attempt, took in (
        (found.reference, f"{found.reference.duration:.1f}s"),
        (found.killed, killed_at),
        (found.restarted, f"{found.restarted.duration:.1f}s"),
    ):
        label = attempt.label + (
            " (--compare-to)" if attempt is found.reference and found.reused_reference else ""
        )
        status = "killed" if attempt is found.killed else attempt.status
        style = STYLES.get(attempt.status, "yellow") if status != "killed" else "yellow"
        table.add_row(label, attempt.run_id, f"[{style}]{status}[/]", took)
    return table


def summary_lines(found: Rehearsal, spec: JobSpec) -> list[str]:
    """What the rehearsal says under its table, one line each."""
    verdict = found.verdict
    if found.carried_output is None:
        kept = (
            "kept across the restart: nothing; no fault_tolerance.checkpoints in the spec, so "
            "on ModelArts nothing the killed job wrote would reach the restarted one either"
        )
    else:
        names = ", ".join(found.carried[:4]) + (" ..." if len(found.carried) > 4 else "")
        kept = (
            f"kept across the restart: output {found.carried_output} (predownloaded, as "
            f"fault_tolerance.checkpoints asks): {len(found.carried)} file(s)"
            + (f": {names}" if names else "")
        )
    wanted = spec.fault_tolerance.checkpoints
    if wanted is not None and not any(name.startswith(wanted) for name in found.carried):
        kept += (
            f"; [yellow]none under {wanted}[/]: the script saved no checkpoint there before "
            "the kill (does it save where fault_tolerance.checkpoints says?)"
        )
    resumed = {
        True: f"[green]yes[/], at {verdict.began}",
        False: f"[red]no[/], started from {verdict.began}",
        None: "[yellow]cannot tell[/]",
    }[verdict.resumed]
    lines = [kept, f"resumed: {resumed} ({verdict.how})"]
    for final in verdict.finals:
        mark = "[green]matches[/]" if final.matches else "[red]differs[/]"
        lines.append(
            f"final {final.name}: {_value(final.restarted)} after the restart, "
            f"{_value(final.reference)} uninterrupted: {mark} "
            f"(within {final.tolerance:.0%})"
        )
    if spec.fault_tolerance.retries == 0:
        lines.append(
            "[yellow]note[/]: fault_tolerance.retries is 0, so ModelArts would not restart this "
            "job at all; set it (1-128) for the restart rehearsed here"
        )
    lines.append(
        f"time lost to the failure: {found.time_lost:.1f}s (killed after "
        f"{found.fired_after:.1f}s + the restart's {found.restarted.duration:.1f}s - the "
        f"uninterrupted {found.reference.duration:.1f}s)"
    )
    return lines


def _value(value: float | None) -> str:
    return "-" if value is None else f"{value:g}"

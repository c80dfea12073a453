"""``majob compare A B``: do two runs train the same? (msprobe dumps, loss curves, weights)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from majob.cli.common import ProfileOption, user_errors

if TYPE_CHECKING:
    from majob.precision.compare import CompareReport, Tolerances
    from majob.precision.sources import RunDump

commands = typer.Typer()
"""This module's commands; ``majob.cli.app`` adds them to ``majob``."""

GradCosineOption = Annotated[
    float,
    typer.Option(
        "--grad-cosine",
        min=-1,
        max=1,
        help="Gradients (--dump grad): a parameter's direction parts below this cosine.",
    ),
]
GradNormOption = Annotated[
    float, typer.Option("--grad-norm-rtol", min=0, help="Gradients: norm tolerance, relative.")
]


def _table(report: CompareReport) -> None:
    from rich.console import Console
    from rich.table import Table

    console = Console(highlight=False)
    if report.config is not None:  # what went in, before any number (precision/config_table.py)
        console.print(report.config.summary(), markup=False)
    counts = report.counts
    table = Table(title=f"majob compare: {report.verdict}", show_header=True)
    for column in ("step", "rank", "pass", "warning", "error", "unmatched", "first not passing"):
        table.add_column(column)
    for pair in report.pairs:
        first = pair.first_bad
        table.add_row(
            str(pair.step),
            pair.rank,
            *(str(pair.counts.get(k, 0)) for k in ("pass", "warning", "error", "unmatched")),
            "-" if first is None else f"{first.api} ({first.result}) {first.where}",
        )
    console.print(table)
    console.print(f"A (golden): {report.golden}\nB (target): {report.target}")
    for line in _spec_lines(report) if report.config is None else []:
        console.print(line, markup=False)
    console.print(
        f"APIs: {counts['pass']} pass, {counts['warning']} warning, {counts['error']} error, "
        f"{counts['unmatched']} unmatched"
    )
    first = report.first_bad
    if first is not None:
        console.print(
            f"first API not passing: {first.api} ({first.result}, max diff {first.max_diff}) "
            f"at step {first.step}, {first.rank}: {first.where or 'no frame of your code'}"
        )
    for side, scanned in zip("AB", report.nonfinite or (), strict=False):  # first NaN/Inf
        for line in scanned.lines():
            console.print(f"{side}: {line}", markup=False, soft_wrap=True)
    for line in _loss_and_weight_lines(report):
        console.print(line)
    for line in [] if report.grad is None else report.grad.summary_lines():
        console.print(line, markup=False)
    for line in report.skipped:
        console.print(f"note: {line}")
    for problem in report.problems:
        console.print(f"[red]problem:[/red] {problem}")


def _loss_and_weight_lines(report: CompareReport) -> list[str]:
    """The loss curves' and the final weights' verdict lines."""
    lines: list[str] = []
    loss = report.loss
    if loss is None:
        lines.append("loss: no series in one of the runs")
    else:
        where = (
            "equal within tolerance at every step"
            if loss.first_beyond is None
            else f"first step beyond tolerance: {loss.first_beyond} "
            f"(A {loss.a[loss.first_beyond]:.6g}, B {loss.b[loss.first_beyond]:.6g})"
        )
        lines.append(
            f"loss: {loss.common} common steps, max abs diff {loss.max_abs_diff:.3g} "
            f"(rtol {loss.rtol:g}, atol {loss.atol:g}): {where}"
        )
    worst = report.worst_weight
    if worst is not None:
        lines.append(
            f"final weights: {len(report.weights)} tensors, worst {worst.name}: max abs diff "
            f"{worst.max_abs_diff:.3g}, cosine {worst.cosine:.6f} {worst.note}".rstrip()
        )
    return lines


def _spec_lines(report: CompareReport) -> list[str]:
    """What differs between the two runs' specs (hyperparameters first), or that it is unknown."""
    differences = report.spec_differences
    if differences is None:
        return ["spec: unknown for one of the runs (its dump does not carry run-spec.json)"]
    if not differences:
        return ["spec: the same in A and B"]
    return [f"spec differs: {field}: A {a}, B {b}" for field, a, b in differences]


@commands.command()
@user_errors
def compare(
    golden: Annotated[
        str,
        typer.Argument(
            help="A, the reference: a run id, a dump/run directory or an obs:// path.",
            show_default=False,
        ),
    ],
    target: Annotated[
        str, typer.Argument(help="B, the run to check (e.g. the migrated one).", show_default=False)
    ],
    format_: Annotated[
        Literal["table", "json"], typer.Option("--format", help="table or json.")
    ] = "table",
    html: Annotated[
        Path | None, typer.Option("--html", help="Also write an HTML report to this file.")
    ] = None,
    loss_rtol: Annotated[
        float, typer.Option("--loss-rtol", min=0, help="Loss tolerance, relative to A's.")
    ] = 1e-4,
    loss_atol: Annotated[float, typer.Option("--loss-atol", min=0, help="Absolute part.")] = 1e-6,
    weight_atol: Annotated[
        float, typer.Option("--weight-atol", min=0, help="Final weights: max abs diff allowed.")
    ] = 1e-4,
    grad_cosine: GradCosineOption = 0.99,
    grad_norm_rtol: GradNormOption = 0.01,
    spec: Annotated[
        str | None,
        typer.Option("--spec", help="Record the verdict for this spec name (default: B's run's)."),
    ] = None,
    runs_dir: Annotated[
        Path | None,
        typer.Option("--runs-dir", help="Where run records are (default: ./.majob/runs)."),
    ] = None,
    profile: ProfileOption = None,
) -> None:
    """Compare run B against run A: per-API dumps, loss curves, checkpoints. Exit 1 if they differ.

    msprobe's per-API compare for each dumped step and rank, the loss curves step by step and
    the final checkpoints."""
    from majob.precision.compare import Tolerances
    from majob.precision.probe import require_msprobe
    from majob.precision.record import PRECISION_DIR, save_check
    from majob.precision.sources import resolve
    from majob.runner.runs import default_runs_dir

    require_msprobe()
    runs = runs_dir or default_runs_dir()
    cache = Path.cwd() / PRECISION_DIR / "downloads"
    a = resolve(golden, runs, cache, profile)
    b = resolve(target, runs, cache, profile)
    tolerances = Tolerances(loss_rtol, loss_atol, weight_atol, grad_cosine, grad_norm_rtol)
    report = _compare_and_show(a, b, tolerances, format_, html)
    name = spec or b.spec_name or a.spec_name
    if name is not None:
        save_check(
            name, verdict=report.verdict, golden=golden, target=target, problems=report.problems
        )
    if report.verdict != "pass":
        raise typer.Exit(1)


def _compare_and_show(
    a: RunDump, b: RunDump, tolerances: Tolerances, format_: str, html: Path | None
) -> CompareReport:
    """Compare in a scratch directory (msprobe writes its tables there), then show the report
    as ``format_`` and write it as HTML to ``html`` when asked."""
    import json
    import tempfile

    from majob.precision.compare import compare_runs, to_json

    with tempfile.TemporaryDirectory(prefix="majob-compare-") as scratch:
        report = compare_runs(a, b, Path(scratch), tolerances)
        if html is not None:
            from majob.precision.html import render

            html.write_text(render(report), encoding="utf-8")
        if format_ == "json":
            typer.echo(json.dumps(to_json(report), indent=2))
        else:
            _table(report)
    return report

"""``majob perf``'s terminal output: the step times, the breakdown and the findings as tables."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from majob.perf.compare import Comparison
    from majob.perf.report import Diagnosis

MAX_RANK_COLUMNS = 4
SHOWN_PARTS = ("data", "forward", "backward", "optimizer", "sync", "gc", "dispatch", "host")


def _console() -> Console:
    from rich.console import Console

    return Console(highlight=False)


def show(diagnosis: Diagnosis, *, installed: bool) -> None:
    from rich.table import Table

    from majob.perf.advisor import INSTALL_HINT

    console = _console()
    console.print(f"majob perf: {diagnosis.target}", markup=False)
    shown = diagnosis.ranks[:MAX_RANK_COLUMNS]
    table = Table(title="step time, and where a profiled step's time goes")
    table.add_column("")
    for r in shown:
        table.add_column(r.label, justify="right")
    table.add_row("device", *(r.device for r in shown))
    table.add_row("step p50 / p95", *(f"{r.p50:.3g} / {r.p95:.3g} ms" for r in shown))
    table.add_row("steps timed", *(f"{len(r.step_ms)} ({r.step_source})" for r in shown))
    for part in SHOWN_PARTS:
        table.add_row(
            part, *(f"{r.per_step[part]:.3g} ms  {100 * r.share(part):3.0f}%" for r in shown)
        )
    console.print(table)
    if len(diagnosis.ranks) > len(shown):
        console.print(f"(and {len(diagnosis.ranks) - len(shown)} more ranks: --format json)")
    _findings(console, diagnosis)
    first = diagnosis.ranks[0]
    tops = ", ".join(f"{o.name} {o.self_ms:.3g} ms ({o.count}x)" for o in first.top_ops[:5])
    console.print(f"top operators by self time ({first.label}): {tops or 'none'}", markup=False)
    result = diagnosis.advisor
    if result is None:
        console.print(INSTALL_HINT if not installed else "msprof-analyze: not run", markup=False)
    elif result.note:
        console.print(result.note, markup=False)
    for line in diagnosis.partial:
        console.print(f"partial profile: {line}", markup=False)
    for line in diagnosis.untypical:
        console.print(f"note: {line}", markup=False)


def _findings(console: Console, diagnosis: Diagnosis) -> None:
    if not diagnosis.findings:
        console.print("findings: none (nothing would save 2% of a step or more)")
        return
    console.print("findings, the largest saving first:")
    for index, f in enumerate(diagnosis.findings, 1):
        console.print(
            f"{index}. saves {f.saving_ms:.3g} ms a step ({100 * f.share:.0f}%): {f.title}",
            markup=False,
        )
        console.print(f"   {f.evidence} [{f.source}, {f.basis}, {f.where}]", markup=False)
        for line in f.advice:
            console.print(f"   - {line}", markup=False)
        for line in f.also:
            console.print(f"   msprof-analyze: {line}", markup=False)


def show_comparison(comparison: Comparison) -> None:
    from rich.table import Table

    console = _console()
    table = Table(title=f"majob perf: A {comparison.a.target} against B {comparison.b.target}")
    for column in ("", "A", "B", "B - A", "B / A"):
        table.add_column(column, justify="left" if not column else "right")
    for row in (*comparison.steps, *comparison.parts):
        name = row.name if row.name.startswith("step") else f"{row.name} (ms/step)"
        ratio = "-" if row.ratio is None else f"{row.ratio:.2f}x"
        table.add_row(name, f"{row.a:.3g}", f"{row.b:.3g}", f"{row.diff:+.3g}", ratio)
    console.print(table)
    for title in comparison.gone:
        console.print(f"gone in B: {title}", markup=False)
    for title in comparison.new:
        console.print(f"new in B: {title}", markup=False)
    for side, d in (("A", comparison.a), ("B", comparison.b)):
        for line in d.partial:
            console.print(f"{side} partial profile: {line}", markup=False)

"""The gradients' layer x step heatmap: an HTML table whose cells are coloured by the direction
cosine (green: the same, through yellow to red as it drops below the threshold; grey: NaN/Inf),
the first diverging step's parted cells outlined. Self-contained (inline styles, no script), for
the ``--html`` page (``html.py``) and the notebook view (``config_table.report_card``)."""

from __future__ import annotations

import math
from html import escape

from majob.precision.gradcompare import GradCell, GradComparison

MAX_LAYERS = 200  # a larger model's rows are cut, with a line saying how many


def colour(cell: GradCell, threshold: float) -> str:
    """The cell's background: green at or above ``threshold``, yellow to red below it."""
    if not math.isfinite(cell.cosine):
        return "#bbbbbb"
    if cell.cosine >= threshold:
        return "#c8e6c9"
    # below the threshold: from yellow (just under it) to red (cosine 0 or less)
    share = max(0.0, min(1.0, cell.cosine / threshold)) if threshold > 0 else 0.0
    green = int(90 + 140 * share)
    return f"#f0{green:02x}50"


def heatmap(grad: GradComparison) -> str:
    """The whole section: a summary line and the table (``#grad-heatmap``)."""
    first = grad.first_diverging
    parted = set() if first is None else {(layer, first[0]) for layer in first[1]}
    head = "".join(f"<th>step {step}</th>" for step in grad.steps)
    body = []
    for layer in grad.layers[:MAX_LAYERS]:
        cells = []
        for step in grad.steps:
            cell = grad.cell(layer, step)
            if cell is None:
                cells.append("<td></td>")
                continue
            mark = (
                ' class="first-diverging" style="outline:2px solid #b22222;'
                if (
                    layer,
                    step,
                )
                in parted
                else ' style="'
            )
            shown = f"{cell.cosine:.4f}" if math.isfinite(cell.cosine) else "NaN"
            title = f"{layer}, step {step}: norm A {cell.norm_a:.4g}, B {cell.norm_b:.4g}"
            cells.append(
                f'<td{mark}background:{colour(cell, grad.cosine_threshold)}" '
                f'data-step="{step}" title="{escape(title)}">{shown}</td>'
            )
        body.append(f"<tr><th>{escape(layer)}</th>{''.join(cells)}</tr>")
    more = len(grad.layers) - MAX_LAYERS
    cut = f"<p>and {more} more parameters (in --format json)</p>" if more > 0 else ""
    where = (
        f"every direction within cosine {grad.cosine_threshold:g}"
        if first is None
        else f"first diverging: step {first[0]}, {escape(', '.join(first[1][:5]))}"
    )
    return (
        f'<p id="grad-summary">Gradient directions (cosine of the signs, per parameter and step; '
        f"threshold {grad.cosine_threshold:g}): {where}</p>"
        f'<table id="grad-heatmap"><tr><th>parameter</th>{head}</tr>{"".join(body)}</table>{cut}'
    )


def section(grad: GradComparison | None) -> str:
    """The page's gradients section ("none recorded" when the runs have no gradients)."""
    if grad is None:
        return '<p id="grad-summary">No gradients recorded (run with --dump grad).</p>'
    return heatmap(grad)

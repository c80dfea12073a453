"""The HTML report of a compare: one self-contained page (inline SVG and CSS, nothing fetched)
with the verdict, the two loss curves overlaid, the worst APIs and the weights' differences."""

from __future__ import annotations

import math
from html import escape

from majob.precision.compare import CompareReport
from majob.text import counted

WIDTH, HEIGHT, PAD = 640, 300, 48
COLORS = ("#1f77b4", "#d62728")  # golden blue, target red (dashed, so overlap stays visible)


def loss_svg(a: tuple[float, ...], b: tuple[float, ...], first_beyond: int | None) -> str:
    """Both curves on shared axes; a vertical line marks the first step beyond tolerance."""
    values = [v for v in (*a, *b) if math.isfinite(v)]
    steps = max(len(a), len(b))
    if not values or steps == 0:
        return "<p>No loss values to plot.</p>"
    low, high = min(values), max(values)
    if high == low:
        high = low + 1.0
    span_x = max(steps - 1, 1)

    def x(step: int) -> float:
        return PAD + (WIDTH - 2 * PAD) * step / span_x

    def y(value: float) -> float:
        return HEIGHT - PAD - (HEIGHT - 2 * PAD) * (value - low) / (high - low)

    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" id="loss-curves" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" '
        'aria-label="loss per step, golden and target">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        f'<line x1="{PAD}" y1="{HEIGHT - PAD}" x2="{WIDTH - PAD}" y2="{HEIGHT - PAD}" '
        'stroke="#444"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{HEIGHT - PAD}" stroke="#444"/>',
        f'<text x="{PAD}" y="{PAD - 8}" font-size="12">{high:.4g}</text>',
        f'<text x="{PAD}" y="{HEIGHT - PAD + 16}" font-size="12">{low:.4g} (step 0)</text>',
        f'<text x="{WIDTH - PAD}" y="{HEIGHT - PAD + 16}" font-size="12" '
        f'text-anchor="end">step {steps - 1}</text>',
    ]
    for index, (series, dash) in enumerate(((a, ""), (b, ' stroke-dasharray="6 4"'))):
        points = " ".join(
            f"{x(i):.1f},{y(v):.1f}" for i, v in enumerate(series) if math.isfinite(v)
        )
        parts.append(
            f'<polyline class="series-{index}" fill="none" stroke="{COLORS[index]}" '
            f'stroke-width="2"{dash} points="{points}"/>'
        )
    if first_beyond is not None:
        at = x(first_beyond)
        parts.append(
            f'<line x1="{at:.1f}" y1="{PAD}" x2="{at:.1f}" y2="{HEIGHT - PAD}" '
            'stroke="#ff7f0e" stroke-dasharray="2 2"/>'
        )
    parts.append("</svg>")
    return "".join(parts)


def render(report: CompareReport) -> str:
    """The whole page for ``report``."""
    counts = report.counts
    verdict = report.verdict
    problems = "".join(f"<li>{escape(p)}</li>" for p in report.problems) or "<li>none</li>"
    first_line = _first_bad_line(report)
    curve = _loss_section(report)
    api_rows = _api_rows(report)
    weight_rows = _weight_rows(report)
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>majob compare: {escape(verdict)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
.pass {{ color: #2a7d2a; }} .fail {{ color: #b22222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; font-size: 13px; text-align: left; }}
</style></head><body>
<h1>majob compare: <span id="verdict" class="{escape(verdict)}">{escape(verdict)}</span></h1>
<p>A (golden): {escape(report.golden)}<br>B (target): {escape(report.target)}</p>
<p id="counts">APIs: {counts["pass"]} pass, {counts["warning"]} warning, {counts["error"]} error,
{counts["unmatched"]} unmatched, over {counted(len(report.pairs), "step/rank pair")}</p>
<p id="first-bad">{first_line}</p>
<h2>Problems</h2><ul>{problems}</ul>
<h2>Loss</h2>{curve}
<h2>Worst APIs</h2>
<table id="worst-apis"><tr><th>step</th><th>rank</th><th>API input/output</th><th>result</th>
<th>max diff</th><th>where</th></tr>{api_rows}</table>
<h2>Final weights</h2>
<table id="weights"><tr><th>tensor</th><th>max abs diff</th><th>cosine</th><th></th></tr>
{weight_rows}</table>
</body></html>
"""


def _first_bad_line(report: CompareReport) -> str:
    first = report.first_bad
    if first is None:
        return "every compared API passed"
    return (
        f"first API not passing: <b>{escape(first.api)}</b> ({escape(first.result)}) at "
        f"step {first.step}, {escape(first.rank)}; {escape(first.where or 'no frame of yours')}"
    )


def _loss_section(report: CompareReport) -> str:
    """The two loss curves, with what they are and where they first part."""
    loss = report.loss
    if loss is None:
        return "<p>No loss series in one of the runs.</p>"
    beyond = (
        "within tolerance at every step"
        if loss.first_beyond is None
        else f"first step beyond: {loss.first_beyond}"
    )
    return (
        loss_svg(loss.a, loss.b, loss.first_beyond)
        + f"<p>blue: A ({escape(report.golden)}), red dashed: B ({escape(report.target)}); "
        f"tolerance {loss.rtol:g}·|A| + {loss.atol:g}; {beyond}</p>"
    )


def _api_rows(report: CompareReport) -> str:
    """The worst APIs of each step and rank pair, the first 20 in step and rank order."""
    rows = sorted(
        (row for pair in report.pairs for row in pair.worst),
        key=lambda r: (r.step, r.rank),
    )[:20]
    return "".join(
        "<tr>"
        + "".join(
            f"<td>{escape(str(cell))}</td>"
            for cell in (r.step, r.rank, r.name, r.result, r.max_diff, r.where)
        )
        + "</tr>"
        for r in rows
    )


def _weight_rows(report: CompareReport) -> str:
    """The ten final weights that differ most."""
    weights = sorted(report.weights, key=lambda d: -(d.max_abs_diff or 0.0))[:10]
    return "".join(
        f"<tr><td>{escape(d.name)}</td><td>{d.max_abs_diff:.3g}</td><td>{d.cosine:.6f}</td>"
        f"<td>{escape(d.note)}</td></tr>"
        for d in weights
    )

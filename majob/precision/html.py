"""The HTML report of a compare: one self-contained page (inline SVG and CSS, nothing fetched)
with the verdict, the two loss curves overlaid, the worst APIs and the weights' differences."""

from __future__ import annotations

import math
from html import escape

from majob.precision.compare import ApiRow, CompareReport
from majob.precision.html_nonfinite import section as nonfinite_section
from majob.precision.html_nonfinite import worst_rows
from majob.text import counted

WIDTH, HEIGHT, PAD = 640, 300, 48
COLORS = ("#1f77b4", "#d62728")  # golden blue, target red (dashed, so overlap stays visible)
MARK = "#e67e00"  # the first diverging step


def loss_svg(a: tuple[float, ...], b: tuple[float, ...], first_beyond: int | None) -> str:
    """Both curves on shared, labelled axes; the first step beyond tolerance is marked on both
    curves with a labelled line (``#first-diverging-step``)."""
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
        'aria-label="loss per optimizer step, A and B">',
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#ffffff"/>',
        *_axes(low, high, steps),
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
        dots = "".join(
            f'<circle cx="{at:.1f}" cy="{y(series[first_beyond]):.1f}" r="4" '
            f'fill="{COLORS[index]}"/>'
            for index, series in enumerate((a, b))
            if first_beyond < len(series) and math.isfinite(series[first_beyond])
        )
        anchor = "end" if at > WIDTH / 2 else "start"
        shift = -4 if anchor == "end" else 4
        parts.append(
            f'<g id="first-diverging-step" data-step="{first_beyond}">'
            f'<line x1="{at:.1f}" y1="{PAD}" x2="{at:.1f}" y2="{HEIGHT - PAD}" '
            f'stroke="{MARK}" stroke-width="1.5" stroke-dasharray="3 2"/>{dots}'
            f'<text x="{at + shift:.1f}" y="{PAD + 12}" font-size="12" fill="{MARK}" '
            f'text-anchor="{anchor}">step {first_beyond}: first beyond tolerance</text></g>'
        )
    parts.append("</svg>")
    return "".join(parts)


def _axes(low: float, high: float, steps: int) -> list[str]:
    """The two axes with their ticks (3 on y, first and last step on x) and their titles."""
    bottom, right = HEIGHT - PAD, WIDTH - PAD
    parts = [
        f'<line x1="{PAD}" y1="{bottom}" x2="{right}" y2="{bottom}" stroke="#444"/>',
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{bottom}" stroke="#444"/>',
    ]
    for fraction in (0.0, 0.5, 1.0):
        value = low + (high - low) * fraction
        at = bottom - (bottom - PAD) * fraction
        parts.append(
            f'<text class="y-tick" x="{PAD - 6}" y="{at + 4:.1f}" font-size="11" '
            f'text-anchor="end">{value:.3g}</text>'
        )
    for step, at, anchor in ((0, PAD, "start"), (steps - 1, right, "end")):
        parts.append(
            f'<text class="x-tick" x="{at}" y="{bottom + 16}" font-size="11" '
            f'text-anchor="{anchor}">{step}</text>'
        )
    parts += [
        f'<text id="x-axis-label" x="{WIDTH / 2:.0f}" y="{HEIGHT - 10}" font-size="12" '
        'text-anchor="middle">optimizer step</text>',
        f'<text id="y-axis-label" x="14" y="{HEIGHT / 2:.0f}" font-size="12" '
        f'text-anchor="middle" transform="rotate(-90 14 {HEIGHT / 2:.0f})">loss</text>',
    ]
    return parts


def render(report: CompareReport) -> str:
    """The whole page for ``report``."""
    counts = report.counts
    verdict = report.verdict
    problems = "".join(f"<li>{escape(p)}</li>" for p in report.problems) or "<li>none</li>"
    api_rows = [
        [str(r.step), r.rank, r.name, r.result, rounded(r.max_diff), r.where]
        for r in _worst_apis(report)
    ]
    weights = sorted(report.weights, key=lambda d: -(d.max_abs_diff or 0.0))[:10]
    weight_rows = [[d.name, f"{d.max_abs_diff:.3g}", f"{d.cosine:.6f}", d.note] for d in weights]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<title>majob compare: {escape(verdict)}</title>
<style>
body {{ font-family: sans-serif; margin: 2em; color: #222; }}
.pass {{ color: #2a7d2a; }} .fail {{ color: #b22222; }}
table {{ border-collapse: collapse; margin: 1em 0; }}
td, th {{ border: 1px solid #ccc; padding: 4px 8px; font-size: 13px; text-align: left; }}
td.number {{ text-align: right; font-variant-numeric: tabular-nums; }}
#grad-heatmap td {{ text-align: right; font-variant-numeric: tabular-nums; }}
</style></head><body>
<h1>majob compare: <span id="verdict" class="{escape(verdict)}">{escape(verdict)}</span></h1>
<p>A (golden): {escape(report.golden)}<br>B (target): {escape(report.target)}</p>
<h2>What differs between A and B</h2>{_config_or_spec(report)}
<p id="counts">APIs: {counts["pass"]} pass, {counts["warning"]} warning, {counts["error"]} error,
{counts["unmatched"]} unmatched, over {counted(len(report.pairs), "step/rank pair")}</p>
<p id="first-bad">{_first_bad_line(report)}</p>
{nonfinite_section(report)}
<h2>Problems</h2><ul>{problems}</ul>
<h2>Loss</h2>{_loss_section(report)}
<h2>Gradients</h2>{_grad_section(report)}
<h2>Worst APIs</h2>
{table("worst-apis", ("step", "rank", "API input/output", "result", "max diff", "where"), api_rows)}
<h2>Final weights</h2>
{table("weights", ("tensor", "max abs diff", "cosine", "note"), weight_rows)}
</body></html>
"""


def table(table_id: str, headers: tuple[str, ...], rows: list[list[str]]) -> str:
    """A table without the columns that are empty in every row (a "where" no row knows, a
    note no tensor has); numbers right-aligned. No rows: a line saying so."""
    if not rows:
        return f'<p id="{table_id}">none</p>'
    keep = [i for i in range(len(headers)) if any(row[i] for row in rows)]
    head = "".join(f"<th>{escape(headers[i])}</th>" for i in keep)
    body = "".join("<tr>" + "".join(_cell(row[i]) for i in keep) + "</tr>" for row in rows)
    return f'<table id="{table_id}"><tr>{head}</tr>{body}</table>'


def _cell(text: str) -> str:
    number = text.rstrip("%").lstrip("-").replace(".", "", 1).replace("e-", "", 1)
    kind = ' class="number"' if number.isdigit() else ""
    return f"<td{kind}>{escape(text)}</td>"


def rounded(text: str) -> str:
    """msprobe's max diff (``0.00012345678912``, ``12.3456789%``, ``N/A``) to 3 significant
    digits; what is no number stays as it is, and msprobe's ``N/A`` becomes empty."""
    if text.strip() in ("", "N/A", "nan"):
        return ""
    percent = text.endswith("%")
    try:
        value = float(text.rstrip("%"))
    except ValueError:
        return text
    return f"{value:.3g}%" if percent else f"{value:.3g}"


def _config_or_spec(report: CompareReport) -> str:
    from majob.precision.config_table import config_section

    return _spec_section(report) if report.config is None else config_section(report.config)


def _spec_section(report: CompareReport) -> str:
    """The fields whose values differ between the runs' specs, hyperparameters first."""
    differences = report.spec_differences
    if differences is None:
        return (
            '<p id="spec-differences">unknown: one of the dumps does not carry its spec '
            "(made before majob kept run-spec.json in the dump)</p>"
        )
    if not differences:
        return '<p id="spec-differences">nothing: the same spec and hyperparameters</p>'
    return table("spec-differences", ("field", "A", "B"), [list(row) for row in differences])


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


def _grad_section(report: CompareReport) -> str:
    from majob.precision.gradhtml import section

    return section(report.grad)


def _worst_apis(report: CompareReport) -> list[ApiRow]:
    """The worst APIs of each step and rank pair, the first 20 in step and rank order."""
    rows = [row for pair in report.pairs for row in pair.worst]
    return sorted(worst_rows(report, rows), key=lambda r: (r.step, r.rank))[:20]

"""``majob perf --html``: one self-contained page (inline SVG and CSS, nothing fetched) with the
findings, the step time over the steps, each profiled step's breakdown as a stacked bar, and
the ranks side by side."""

from __future__ import annotations

from collections.abc import Sequence
from html import escape

from majob.perf.compare import Comparison
from majob.perf.report import Diagnosis
from majob.perf.timeline import PARTS

WIDTH, HEIGHT, PAD = 640, 260, 48
COLORS = dict(
    zip(
        PARTS,
        ("#d62728", "#1f77b4", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b", "#bcbd22", "#7f7f7f"),
        strict=True,
    )
)
STYLE = """body { font-family: sans-serif; margin: 2em; color: #222; }
table { border-collapse: collapse; margin: 1em 0; }
td, th { border: 1px solid #ccc; padding: 4px 8px; font-size: 13px; text-align: left;
  vertical-align: top; }
.legend span { display: inline-block; width: 12px; height: 12px; margin: 0 4px 0 12px; }"""
SCOPED_STYLE = """.majob-perf { font-family: sans-serif; color: #222; }
.majob-perf table { border-collapse: collapse; margin: 1em 0; }
.majob-perf td, .majob-perf th { border: 1px solid #ccc; padding: 4px 8px; font-size: 13px;
  text-align: left; vertical-align: top; }
.majob-perf .legend span { display: inline-block; width: 12px; height: 12px;
  margin: 0 4px 0 12px; }"""  # the page's STYLE, kept to the report's div in a notebook


def _svg(svg_id: str, label: str, body: list[str], x_label: str, y_label: str) -> str:
    bottom = HEIGHT - PAD
    return (
        f'<svg xmlns="http://www.w3.org/2000/svg" id="{svg_id}" width="{WIDTH}" '
        f'height="{HEIGHT}" viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="{label}">'
        f'<rect width="{WIDTH}" height="{HEIGHT}" fill="#fff"/>'
        f'<line x1="{PAD}" y1="{bottom}" x2="{WIDTH - PAD}" y2="{bottom}" stroke="#444"/>'
        f'<line x1="{PAD}" y1="{PAD}" x2="{PAD}" y2="{bottom}" stroke="#444"/>'
        + "".join(body)
        + f'<text x="{WIDTH / 2:.0f}" y="{HEIGHT - 10}" font-size="12" text-anchor="middle">'
        f"{escape(x_label)}</text>"
        f'<text x="14" y="{HEIGHT / 2:.0f}" font-size="12" text-anchor="middle" '
        f'transform="rotate(-90 14 {HEIGHT / 2:.0f})">{escape(y_label)}</text></svg>'
    )


def _y_ticks(high: float) -> list[str]:
    bottom = HEIGHT - PAD
    return [
        f'<text x="{PAD - 6}" y="{bottom - (bottom - PAD) * f + 4:.1f}" font-size="11" '
        f'text-anchor="end">{high * f:.3g}</text>'
        for f in (0.0, 0.5, 1.0)
    ]


def step_time_svg(series: Sequence[tuple[str, Sequence[float]]]) -> str:
    """Each rank's step time (ms) over its timed steps."""
    values = [v for _, s in series for v in s]
    if not values:
        return "<p>No step times.</p>"
    high = max(values) or 1.0
    steps = max(len(s) for _, s in series)
    span = max(steps - 1, 1)
    body = _y_ticks(high)
    palette = list(COLORS.values())
    for index, (_, s) in enumerate(series):
        points = " ".join(
            f"{PAD + (WIDTH - 2 * PAD) * i / span:.1f},"
            f"{HEIGHT - PAD - (HEIGHT - 2 * PAD) * v / high:.1f}"
            for i, v in enumerate(s)
        )
        color = palette[index % len(palette)]
        body.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{points}"/>')
    return _svg("step-times", "step time per step", body, "timed step", "step time (ms)")


def breakdown_svg(bars: Sequence[tuple[str, dict[str, float]]], svg_id: str, x_label: str) -> str:
    """One stacked bar per entry (a step, or a rank): its parts in ms."""
    if not bars:
        return "<p>No profiled step.</p>"
    high = max(sum(parts.values()) for _, parts in bars) or 1.0
    slot = (WIDTH - 2 * PAD) / len(bars)
    body = _y_ticks(high)
    for index, (name, parts) in enumerate(bars):
        x = PAD + slot * index + slot * 0.15
        y = float(HEIGHT - PAD)
        for part in PARTS:
            h = (HEIGHT - 2 * PAD) * parts.get(part, 0.0) / high
            if h > 0:
                y -= h
                body.append(
                    f'<rect class="part-{part}" x="{x:.1f}" y="{y:.1f}" width="{slot * 0.7:.1f}" '
                    f'height="{h:.1f}" fill="{COLORS[part]}"><title>{escape(name)} {part}: '
                    f"{parts[part]:.3g} ms</title></rect>"
                )
        body.append(
            f'<text x="{x + slot * 0.35:.1f}" y="{HEIGHT - PAD + 14}" font-size="10" '
            f'text-anchor="middle">{escape(name)}</text>'
        )
    return _svg(svg_id, f"time per {x_label} by part", body, x_label, "ms")


def _legend() -> str:
    items = "".join(f'<span style="background:{c}"></span>{p}' for p, c in COLORS.items())
    return f'<p class="legend">{items}</p>'


def _table(table_id: str, headers: Sequence[str], rows: list[list[str]]) -> str:
    if not rows:
        return f'<p id="{table_id}">none</p>'
    head = "".join(f"<th>{escape(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    return f'<table id="{table_id}"><tr>{head}</tr>{body}</table>'


def render(diagnosis: Diagnosis) -> str:
    """The report as a page of its own (``majob perf --html``)."""
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>majob perf</title>
<style>{STYLE}</style></head><body>
{_body(diagnosis, "h1", "h2")}
</body></html>
"""


def fragment(diagnosis: Diagnosis) -> str:
    """The report inside a notebook's output cell: its style kept to its own ``div``."""
    body = _body(diagnosis, "h3", "h4")
    return f'<div class="majob-perf"><style>{SCOPED_STYLE}</style>{body}</div>'


def _body(diagnosis: Diagnosis, title: str, heading: str) -> str:
    findings = [
        [
            f"{f.saving_ms:.3g} ms ({100 * f.share:.0f}%)",
            escape(f"{f.title}: {f.evidence}"),
            "<br>".join(escape(a) for a in f.advice),
            escape(f"{f.source} ({f.basis})"),
        ]
        for f in diagnosis.findings
    ]
    first = diagnosis.ranks[0]
    per_step = [(f"#{s.number}", {p: s.parts[p] / 1e3 for p in PARTS}) for s in first.steps]
    ranks = [(r.label, dict(r.per_step)) for r in diagnosis.ranks]
    notes = "".join(f"<li>{escape(line)}</li>" for line in diagnosis.partial)
    untypical = "".join(f"<li>{escape(line)}</li>" for line in diagnosis.untypical)
    advisor = diagnosis.advisor
    advisor_note = "msprof-analyze is not installed" if advisor is None else advisor.note or "ran"
    h, t = heading, title
    partial = f"<{h}>Partial profile</{h}><ul id='partial'>{notes}</ul>" if notes else ""
    return f"""<{t}>majob perf: {escape(diagnosis.target)}</{t}>
{partial}
{f"<ul id='untypical'>{untypical}</ul>" if untypical else ""}
<{h}>Findings</{h}>
{_table("findings", ("saves per step", "finding", "what to change", "from"), findings)}
<p id="msprof">msprof-analyze: {escape(advisor_note)}</p>
<{h}>Step time</{h}>
{step_time_svg([(r.label, r.step_ms) for r in diagnosis.ranks])}
<{h}>Each profiled step ({escape(first.label)})</{h}>{_legend()}
{breakdown_svg(per_step, "step-breakdown", "profiled step")}
<{h}>Ranks side by side</{h}>
{breakdown_svg(ranks, "rank-breakdown", "rank")}"""


def render_comparison(comparison: Comparison) -> str:
    rows = [
        [escape(r.name), f"{r.a:.3g}", f"{r.b:.3g}", f"{r.diff:+.3g}"]
        for r in (*comparison.steps, *comparison.parts)
    ]
    bars = [
        ("A", {r.name: r.a for r in comparison.parts}),
        ("B", {r.name: r.b for r in comparison.parts}),
    ]
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>majob perf A B</title>
<style>{STYLE}</style></head><body>
<h1>majob perf: A {escape(comparison.a.target)}, B {escape(comparison.b.target)}</h1>
{_table("comparison", ("", "A (ms)", "B (ms)", "B - A"), rows)}{_legend()}
{breakdown_svg(bars, "ab-breakdown", "run")}
<p>gone in B: {escape(", ".join(comparison.gone) or "none")}<br>
new in B: {escape(", ".join(comparison.new) or "none")}</p>
</body></html>
"""

"""The pieces every card and table is made of, styled inline.

Jupyter's own stylesheet right-aligns table cells, pads them and centres tables (so a label
ended up far from its value); a card is therefore a grid of ``div``s, and a table's cells carry
their own alignment. Each result word (passed, failed, Completed...) has one colour wherever it
is shown. Values are escaped here unless the caller passes HTML it made (``Html``).
"""

from __future__ import annotations

import html
from collections.abc import Sequence

from majob.notebook.series import SeriesMap, sparkline

GREEN, RED, AMBER, BLUE, GREY = "#1a7f37", "#cf222e", "#9a6700", "#0969da", "#57606a"
COLOURS = {
    "passed": GREEN,
    "Completed": GREEN,
    "failed": RED,
    "Failed": RED,
    "Abnormal": RED,
    "interrupted": AMBER,
    "refused": AMBER,  # turned away before it ran: not a failure of the stage
    "Terminated": AMBER,
    "Terminating": AMBER,
    "running": BLUE,
    "Running": BLUE,
    "Creating": BLUE,
    "Pending": BLUE,
    "skipped": GREY,
}
_CARD = (
    "border:1px solid #d0d7de;border-radius:6px;padding:6px 10px;margin:4px 0;max-width:52em;"
    "font-size:13px;line-height:1.45;text-align:left"
)
_GRID = "display:grid;grid-template-columns:max-content auto;column-gap:0.9em;align-items:baseline"
_CELL = "text-align:left;padding:2px 10px 2px 0;border-bottom:1px solid #eaeef2;white-space:nowrap"


class Html(str):
    """Text that is HTML already (majob made it): not escaped again."""


def text(value: object) -> Html:
    return value if isinstance(value, Html) else Html(html.escape(str(value)))


def badge(word: str) -> Html:
    """``word`` on its colour (grey when it has none)."""
    colour = COLOURS.get(word, GREY)
    return Html(
        f"<span data-majob='badge' style='background:{colour};color:#fff;border-radius:3px;"
        "padding:0 6px;"
        f"font-size:12px'>{html.escape(word)}</span>"
    )


def coloured(word: str) -> Html:
    """``word`` in its colour (a table cell: a badge per row would be loud)."""
    colour = COLOURS.get(word.split(" ")[0], "inherit")
    return Html(f"<span style='color:{colour};font-weight:600'>{html.escape(word)}</span>")


def card(
    title: str,
    state: str,
    facts: Sequence[tuple[str, object]],
    series: SeriesMap | None = None,
    *,
    after: str = "",
) -> Html:
    """A card: the bold ``title``, ``state`` as a badge and ``after`` it (a duration), then each
    (label, value), the label right-aligned against its value (a short label is not left
    far from it), then the metrics."""
    rows = [(label, text(value)) for label, value in facts]
    strip = metrics_strip(series or {})
    if strip:
        rows.append(("metrics", strip))
    cells = "".join(
        f"<div style='color:{GREY};text-align:right'>{html.escape(label)}</div><div>{value}</div>"
        for label, value in rows
    )
    tail = f" <span style='color:{GREY}'>{html.escape(after)}</span>" if after else ""
    return Html(
        f"<div data-majob='card' style='{_CARD}'>"
        f"<div><b>{html.escape(title)}</b> {badge(state)}{tail}</div>"
        f"<div data-majob='facts' style='{_GRID}'>{cells}</div></div>"
    )


def metrics_strip(series: SeriesMap) -> Html:
    """Each metric's last value and its sparkline, side by side (the node named when there
    are several)."""
    several = len(series) > 1
    parts = []
    for node in sorted(series):
        for name, values in sorted(series[node].items()):
            if values:
                label = f"{name} ({node})" if several else name
                parts.append(
                    f"<span style='margin-right:1.2em;white-space:nowrap'>{html.escape(label)} "
                    f"<b>{values[-1]:g}</b> {sparkline(list(values))}</span>"
                )
    return Html("".join(parts))


def files(names: Sequence[str], limit: int = 8) -> Html:
    shown = ", ".join(html.escape(f) for f in names[:limit])
    more = f" and {len(names) - limit} more" if len(names) > limit else ""
    return Html((shown + more) or "-")


def table(title: str, header: Sequence[str], rows: Sequence[Sequence[object]]) -> Html:
    """A compact left-aligned table under a bold ``title``."""
    head = "".join(f"<th style='{_CELL}'>{html.escape(h)}</th>" for h in header)
    body = "".join(
        "<tr>" + "".join(f"<td style='{_CELL}'>{text(cell)}</td>" for cell in row) + "</tr>"
        for row in rows
    )
    return Html(
        f"<div style='font-size:13px;text-align:left'><b>{html.escape(title)}</b>"
        "<table style='border-collapse:collapse;margin:2px 0;font-size:13px'>"
        f"<thead><tr>{head}</tr></thead>"
        f"<tbody>{body}</tbody></table></div>"
    )

"""The report page's NaN/Inf part: where A and B first made a non-finite value, and the worst
APIs without the NaN rows that only follow from it."""

from __future__ import annotations

from html import escape

from majob.precision.compare import ApiRow, CompareReport

_NOT_FINITE = ("nan", "inf", "-inf")


def section(report: CompareReport) -> str:
    """``<p id="first-nonfinite">``: each side's first NaN/Inf (or that it has none)."""
    if report.nonfinite is None:
        return ""
    lines = []
    for side, scanned in zip("AB", report.nonfinite, strict=True):
        said = scanned.lines() or ["no NaN/Inf in the loss, the dumped tensors or the gradients"]
        lines.append(f"<b>{side}</b>: " + "<br>".join(escape(line) for line in said))
    return '<h2>First NaN/Inf</h2><p id="first-nonfinite">' + "<br>".join(lines) + "</p>"


def worst_rows(report: CompareReport, rows: list[ApiRow]) -> list[ApiRow]:
    """``rows`` without those whose difference is NaN/Inf once a first NaN/Inf is known: they
    follow from it (the section above names it), and would fill the table."""
    known = report.nonfinite is not None and any(s.first for s in report.nonfinite)
    if not known:
        return rows
    return [r for r in rows if r.max_diff.strip().rstrip("%").lower() not in _NOT_FINITE]

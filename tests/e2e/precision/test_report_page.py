"""The compare report as a person sees it: rendered by headless Chromium, checked by its
elements (the DOM Chromium built, and a screenshot that is not blank), not by its pixels."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from majob.precision.compare import ApiRow, CompareReport, PairResult
from majob.precision.html import render
from majob.precision.series import compare_series
from majob.precision.specs import spec_differences

A_SPEC = {"name": "mnist", "hyperparameters": {"lr": 0.01, "epochs": 1}, "code": {"dir": "a"}}
B_SPEC = {"name": "mnist", "hyperparameters": {"lr": 0.02, "epochs": 1}, "code": {"dir": "b"}}


def diverging_report() -> CompareReport:
    report = CompareReport(golden="run-a", target="run-b")
    report.spec_differences = spec_differences(A_SPEC, B_SPEC)
    a = [2.3, 1.9, 1.5, 1.2, 1.0, 0.9]
    b = [2.3, 1.9, 1.5, 1.4, 1.3, 1.2]
    report.loss = compare_series(a, b, rtol=1e-4, atol=1e-6, sources=("x", "y"))
    row = ApiRow(
        step=0, rank="rank0", name="Functional.linear.1.forward.output.0",
        api="Functional.linear.1.forward", result="error", max_diff="0.000123456789012",
        message="", where="",
    )  # fmt: skip
    percent = ApiRow(0, "rank0", "Tensor.add.0.forward.output.0", "Tensor.add.0.forward",
                     "warning", "12.3456789%", "", "")  # fmt: skip
    counts = {"pass": 10, "error": 1, "warning": 1}
    report.pairs = [PairResult(0, "rank0", counts, 12, 12, row, (row, percent), Path("x.csv"))]
    return report


class Tables(HTMLParser):
    """Every table's header cells and rows of cells, by the table's id."""

    def __init__(self) -> None:
        super().__init__()
        self.tables: dict[str, list[list[str]]] = {}
        self._current: list[list[str]] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "table":
            self._current = self.tables.setdefault(dict(attrs).get("id") or "", [])
        elif tag == "tr" and self._current is not None:
            self._current.append([])
        elif tag in ("td", "th"):
            self._cell = []

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._current:
            self._current[-1].append("".join(self._cell).strip())
            self._cell = None
        elif tag == "table":
            self._current = None


def test_the_report_marks_the_first_diverging_step_and_shows_what_differs_at_the_top(
    tmp_path: Path, chromium
) -> None:
    page = tmp_path / "report.html"
    page.write_text(render(diverging_report()), encoding="utf-8")
    dom = chromium.dom(page)

    # The spec differences come first, hyperparameters first, before any API count or plot.
    tables = Tables()
    tables.feed(dom)
    spec_rows = tables.tables["spec-differences"]
    assert spec_rows == [
        ["field", "A", "B"],
        ["hyperparameters.lr", "0.01", "0.02"],
        ["code.dir", "a", "b"],
    ]
    assert dom.index('id="spec-differences"') < dom.index('id="counts"') < dom.index("loss-curves")

    # The plot: both curves, labelled axes, the first diverging step marked on it.
    assert dom.count("<polyline") == 2
    assert re.search(r'id="x-axis-label"[^>]*>optimizer step</text>', dom)
    assert re.search(r'id="y-axis-label"[^>]*>loss</text>', dom)
    marker = re.search(r'<g id="first-diverging-step" data-step="(\d+)">(.*?)</g>', dom)
    assert marker is not None and marker.group(1) == "3"
    assert marker.group(2).count("<circle") == 2  # on each curve
    assert "step 3: first beyond tolerance" in marker.group(2)

    # Diffs rounded to 3 significant digits; no column that every row leaves empty.
    apis = tables.tables["worst-apis"]
    assert apis[0] == ["step", "rank", "API input/output", "result", "max diff"]  # no "where"
    assert [row[4] for row in apis[1:]] == ["0.000123", "12.3%"]
    for rows in tables.tables.values():
        for column in range(len(rows[0])):
            assert any(row[column] for row in rows[1:]), (rows[0], column)

    shot = chromium.screenshot(page, tmp_path / "report.png")
    image = pytest.importorskip("PIL.Image")
    with image.open(shot) as png:
        colors = png.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 10  # not a blank page


def test_a_report_of_dumps_without_their_specs_says_the_difference_is_unknown(
    tmp_path: Path, chromium
) -> None:
    report = diverging_report()
    report.spec_differences = None
    page = tmp_path / "report.html"
    page.write_text(render(report), encoding="utf-8")
    dom = chromium.dom(page)
    assert re.search(r'<p id="spec-differences">unknown: one of the dumps', dom)

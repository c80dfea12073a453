"""The notebook cards and tables, rendered by headless Chromium under the rules Jupyter's own
stylesheet applies to outputs (cells right-aligned and padded, tables centred, striped rows:
what put a card's labels far from their values). A script in the page measures the layout and
writes it into the page; the test reads the DOM Chromium dumps: elements, not pixels."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import majob.notebook  # noqa: F401  (registers the renderers)
from majob.pipeline.ledger_schema import StageRecord, StageRecords
from majob.pipeline.results import PipelineResult, StageResult
from majob.service.base import Job, JobList

# The rules of JupyterLab's rendermime stylesheet (jp-RenderedHTMLCommon) that reach a table.
JUPYTER_CSS = """
body { font-family: sans-serif; font-size: 14px; margin: 8px; }
.jp-RenderedHTMLCommon table { border-collapse: collapse; border: none; table-layout: fixed;
  margin-left: auto; margin-right: auto; margin-bottom: 1em; }
.jp-RenderedHTMLCommon tr, .jp-RenderedHTMLCommon th, .jp-RenderedHTMLCommon td {
  text-align: right; vertical-align: middle; padding: 0.5em; line-height: normal; }
.jp-RenderedHTMLCommon tbody tr:nth-child(odd) { background: #f5f5f5; }
.jp-RenderedHTMLCommon img, .jp-RenderedHTMLCommon svg { max-width: 100%; height: auto; }
"""

MEASURE = """
<pre id="layout"></pre>
<script>
const box = (e) => e.getBoundingClientRect();
const gaps = [];
for (const grid of document.querySelectorAll("[data-majob=facts]")) {
  const cells = [...grid.children];
  for (let i = 0; i + 1 < cells.length; i += 2) {
    const label = cells[i].firstChild ? document.createRange() : null;
    label.selectNodeContents(cells[i]);
    gaps.push([cells[i].textContent, box(cells[i + 1]).left - label.getBoundingClientRect().right,
               Math.abs(box(cells[i + 1]).top - box(cells[i]).top)]);
  }
}
const badges = [...document.querySelectorAll("[data-majob=badge]")].map(
  (b) => [b.textContent, getComputedStyle(b).backgroundColor]);
const cells = [...document.querySelectorAll("td")].map((c) => getComputedStyle(c).textAlign);
const words = [...document.querySelectorAll("td span")].map(
  (s) => [s.textContent, getComputedStyle(s).color]);
const output = document.getElementById("output");
document.getElementById("layout").textContent = JSON.stringify({
  height: box(output).height, left: box(output).left, gaps, badges, cells, words,
  tables: [...document.querySelectorAll("table")].map((t) => box(t).left)});
</script>
"""
GREEN, RED, GREY = "rgb(26, 127, 55)", "rgb(207, 34, 46)", "rgb(87, 96, 106)"


def measured(html: str, tmp_path: Path) -> dict:
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if chromium is None:
        pytest.skip("chromium is not installed: the cards' rendering is NOT checked")
    page = tmp_path / "cards.html"
    page.write_text(
        f"<html><head><meta charset='utf-8'><style>{JUPYTER_CSS}</style></head><body>"
        f"<div id='output' class='jp-RenderedHTMLCommon'>{html}</div>{MEASURE}</body></html>"
    )
    done = subprocess.run(
        [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
         "--window-size=1000,800", "--dump-dom", page.as_uri()],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    found = re.search(r'<pre id="layout">(.*?)</pre>', done.stdout, re.S)
    assert found is not None and found[1], done.stdout[-2000:]
    return dict(json.loads(found[1].replace("&quot;", '"').replace("&amp;", "&")))


SERIES = {"worker-0": {"loss": [2.3, 1.2, 0.8, 0.31], "accuracy": [60.0, 80.0, 88.0, 91.2]}}


def three_stages() -> PipelineResult:
    job = Job(id="3f2a9c1e-0000-4000-8000-000000000001", name="mnist-debug", phase="Completed")
    return PipelineResult(
        "mnist-digits",
        [
            StageResult(
                "local",
                "passed",
                why="has not passed yet",
                duration=12.3,
                outputs=("train_url/model.pth",),
                series=SERIES,
            ),
            StageResult(
                "debug",
                "skipped",
                why="passed for this code and spec (#2)",
                duration=45.0,
                series=SERIES,
                job=job,
            ),
            StageResult(
                "formal",
                "failed",
                why="follows the stage before it",
                duration=300.0,
                reason="expect.metrics.loss: 0.9 is not < 0.5",
                series=SERIES,
                job=job,
            ),
        ],
        "pipeline stopped: the formal stage failed",
    )


def test_three_stage_cards_fit_one_screen_labels_beside_values_results_coloured(
    tmp_path: Path,
) -> None:
    layout = measured(three_stages()._repr_html_() or "", tmp_path)
    assert layout["height"] < 600, layout  # a 1000x800 window: room to spare
    assert {label for label, _, _ in layout["gaps"]} >= {"job", "ran", "reason", "metrics"}
    for label, gap, misaligned in layout["gaps"]:
        assert 0 <= gap < 24 and misaligned < 4, (label, gap, misaligned)  # 0.9em apart
    assert layout["badges"] == [["passed", GREEN], ["skipped", GREY], ["failed", RED]]


def test_history_and_jobs_are_left_aligned_tables_with_coloured_results(
    tmp_path: Path,
) -> None:
    records = StageRecords(
        [
            StageRecord(
                2,
                "mnist-digits",
                "debug",
                "s" * 8,
                "c" * 8,
                "failed",
                reason="expect.metrics.loss",
                job_id="3f2a9c1e-0000",
                duration=45.0,
                metrics=SERIES,
                started_at="2026-12-03T10:00:00+00:00",
            ),
            StageRecord(
                1,
                "mnist-digits",
                "local",
                "s" * 8,
                "c" * 8,
                "passed",
                duration=12.3,
                started_at="2026-12-03T09:59:00+00:00",
            ),
        ]
    )
    jobs = JobList([Job(id="3f2a9c1e-0000", name="mnist-debug", phase="Completed")])
    html = (records._repr_html_() or "") + (jobs._repr_html_() or "")
    assert "ledger: 2 records, newest first" in html and "loss 0.31" in html
    layout = measured(html, tmp_path)
    assert set(layout["cells"]) == {"left"}
    assert all(left < layout["left"] + 5 for left in layout["tables"]), layout  # not centred
    assert ["failed", RED] in layout["words"] and ["passed", GREEN] in layout["words"]
    assert ["Completed", GREEN] in layout["words"]

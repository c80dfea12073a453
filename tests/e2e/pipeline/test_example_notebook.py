"""The example notebook, executed on a real Jupyter kernel with nbclient: the whole MNIST
pipeline (local, debug, formal) on the emulated cloud. Any cell that errors fails the test.
Then it is rendered to HTML with nbconvert, as a reader sees it, and opened in headless
Chromium. It uses only the public API, and leaves nothing behind.

This is the one test that runs the MNIST example through all three stages (each imports torch).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

ROOT = Path(__file__).resolve().parents[3]
NOTEBOOK = ROOT / "examples" / "pipeline.ipynb"
PUBLIC = {"majob", "majob.testing"}  # the façade, and the emulated cloud for a walkthrough


def text_of(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        data = output.get("data", {})
        parts.append(data.get("text/plain", ""))
        parts.append(data.get("text/html", ""))
    return "\n".join(parts)


def majob_modules_imported(source: str) -> set[str]:
    modules: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            modules |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            modules.add(node.module)
    return {m for m in modules if m == "majob" or m.startswith("majob.")}


def snapshot(*roots: Path) -> set[Path]:
    return {p for root in roots if root.exists() for p in root.rglob("*")}


def test_the_notebook_uses_only_the_public_api() -> None:
    import nbformat

    notebook = nbformat.read(NOTEBOOK, as_version=4)
    code = "\n".join(cell.source for cell in notebook.cells if cell.cell_type == "code")
    assert majob_modules_imported(code) <= PUBLIC, majob_modules_imported(code) - PUBLIC


def test_the_example_notebook_runs_the_mnist_pipeline_and_renders_in_chromium(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chromium
) -> None:
    import nbformat
    from nbclient import NotebookClient
    from nbconvert import HTMLExporter

    # The kernel inherits the environment: keep a user's own profiles and caches out, and give
    # it a temp dir of its own, to see that the notebook leaves nothing there.
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "MAJOB_PROFILE"):
        monkeypatch.delenv(name, raising=False)
    checkout = (ROOT / "examples", ROOT / "out", ROOT / ".majob")
    before = snapshot(*checkout)
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    client = NotebookClient(
        notebook,
        timeout=600,
        kernel_name="python3",
        resources={"metadata": {"path": str(NOTEBOOK.parent)}},
    )
    client.execute()  # raises CellExecutionError naming the cell when any cell errors

    code = [cell for cell in notebook.cells if cell.cell_type == "code"]
    everything = "\n".join(text_of(cell) for cell in code)
    assert "[majob] pipeline passed: local, debug and formal" in everything
    assert "train_url/model.pth" in everything
    assert "nothing to run: local, debug and formal passed" in everything
    run_cell = next(cell for cell in code if cell.source.startswith("result = pipeline.run"))
    html = "".join(o.get("data", {}).get("text/html", "") for o in run_cell.outputs)
    assert "formal stage" in html and "<svg" in html  # the display, with its metrics plot
    plot_cell = next(cell for cell in code if "plot(" in cell.source)
    assert any("image/png" in o.get("data", {}) for o in plot_cell.outputs)
    # Nothing left behind: the scratch dir is gone (the last cell says False), the kernel's
    # temp dir is as it was, and nothing new in the checkout.
    assert text_of(code[-1]).strip() == "False"
    assert not [p.name for p in temp.iterdir() if p.name.startswith("majob-")]
    assert snapshot(*checkout) - before == set()

    page = tmp_path / "pipeline.html"
    body, _ = HTMLExporter().from_notebook_node(notebook)
    page.write_text(body, encoding="utf-8")
    dom = chromium.dom(page)
    assert "formal stage" in dom and "Completed" in dom  # the pipeline's cards
    assert re.search(r'<img[^>]+src="data:image/png;base64,', dom)  # the loss plot
    assert "Traceback" not in dom and "output_error" not in dom
    shot = chromium.screenshot(page, tmp_path / "pipeline.png", size="1200,2400")
    image = pytest.importorskip("PIL.Image")
    with image.open(shot) as png:
        colors = png.convert("RGB").getcolors(maxcolors=1 << 20)
    assert colors is not None and len(colors) > 10  # not a blank page

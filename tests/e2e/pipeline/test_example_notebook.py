"""The example notebook, executed on a real Jupyter kernel with nbclient: the whole MNIST
pipeline (local, debug, formal) on the emulated cloud. Any cell that errors fails the test.

This is the one test that runs the MNIST example through all three stages (each imports torch).
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(900)]

NOTEBOOK = Path(__file__).resolve().parents[3] / "examples" / "pipeline.ipynb"


def text_of(cell: dict) -> str:
    parts = []
    for output in cell.get("outputs", []):
        parts.append(output.get("text", ""))
        data = output.get("data", {})
        parts.append(data.get("text/plain", ""))
        parts.append(data.get("text/html", ""))
    return "\n".join(parts)


def test_the_example_notebook_runs_the_mnist_pipeline_without_errors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import nbformat
    from nbclient import NotebookClient

    # The kernel inherits the environment: keep a user's own profiles and caches out.
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    for name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "MAJOB_PROFILE"):
        monkeypatch.delenv(name, raising=False)
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
    assert "majob/mnist/output/model.pth" in everything
    assert "nothing to run: local, debug and formal passed" in everything
    run_cell = next(cell for cell in code if cell.source.startswith("result = pipeline.run"))
    html = "".join(o.get("data", {}).get("text/html", "") for o in run_cell.outputs)
    assert "formal stage" in html and "<svg" in html  # the display, with its metrics plot
    plot_cell = next(cell for cell in code if "plot(" in cell.source)
    assert any("image/png" in o.get("data", {}) for o in plot_cell.outputs)

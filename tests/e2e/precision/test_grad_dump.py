"""``majob run SPEC --dump grad`` twice with one planted difference (the learning rate), then
``majob compare``: the first diverging step and layer in the text, the JSON and the HTML heatmap;
and ``majob submit --dump grad`` on the emulated ModelArts, whose node records the gradients
from the staged bootstrap and uploads them with the outputs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud

pytestmark = pytest.mark.slow
pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")

ROOT = Path(__file__).resolve().parents[3]
BUCKET = "majob-demo"
SPEC = f"""\
name: mnist-grad
code: {{dir: {ROOT / "examples" / "mnist"}, boot_file: train.py, obs: "obs://{BUCKET}/g/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u, nodes: 1}}
inputs: [{{name: data_url, obs: "obs://{BUCKET}/g/data/", local: {ROOT / "examples" / "data"}}}]
outputs: [{{name: train_url, obs: "obs://{BUCKET}/g/out/"}}]
hyperparameters: {{epochs: 1, lr: 0.01, batch_size: 64}}
precision: {{steps: [0, 1]}}
stages: {{debug: {{timeout: 5m}}}}
"""


def run_id(output: str) -> str:
    found = re.search(r"majob compare (\S+) OTHER_RUN", output)
    assert found, output
    return found.group(1)


def test_two_runs_with_another_lr_part_at_step_1_named_in_text_json_and_html(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    runner = CliRunner()
    first = runner.invoke(app, ["run", str(spec), "--dump", "grad"])
    assert first.exit_code == 0, first.output
    assert "gradients: steps 0, 1 (1 rank) in precision-dump/grad/" in first.output
    # the word may come before SPEC too; Adam's first step moves every weight by about lr
    second = runner.invoke(
        app, ["run", "--dump", "grad", str(spec), "--set", "hyperparameters.lr=0.05"]
    )
    assert second.exit_code == 0, second.output
    a, b = run_id(first.output), run_id(second.output)
    html = tmp_path / "report.html"
    shown = runner.invoke(app, ["compare", a, b, "--html", str(html)])
    assert shown.exit_code == 1, shown.output
    text = " ".join(shown.output.split())  # rich wraps long lines
    assert "problem: gradient directions part at step 1: conv.weight" in text
    compared = runner.invoke(app, ["compare", a, b, "--format", "json"])
    gradients = json.loads(compared.stdout)["gradients"]
    assert gradients["first_diverging"]["step"] == 1
    assert gradients["first_diverging"]["layers"][0] == "conv.weight"  # the model's first
    assert all(layer["cosine"][0] == 1.0 for layer in gradients["layers"])  # the same weights
    page = html.read_text(encoding="utf-8")
    assert '<table id="grad-heatmap">' in page
    assert re.search(r'class="first-diverging"[^>]*data-step="1"', page)
    same = runner.invoke(app, ["compare", a, a, "--format", "json"])
    assert same.exit_code == 0 and json.loads(same.stdout)["gradients"]["first_diverging"] is None


def test_submit_dump_grad_stages_the_settings_and_the_node_records_them(
    tmp_path: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC.replace("precision: {steps: [0, 1]}", "precision: {steps: [0]}"))
    runner = CliRunner()
    args = ["submit", str(spec), "grad", "--dump", "--profile", "emulator", "--upload-inputs"]
    submitted = runner.invoke(app, [*args, "--wait"])
    assert submitted.exit_code == 0, submitted.output
    staged = tmp_path / ".majob" / "precision" / "staging" / "mnist-grad" / "majob_precision"
    settings = json.loads((staged / "settings.json").read_text())
    assert settings["grad"]["steps"] == [0] and settings["grad"]["layers"] == []
    assert settings["deterministic"] is False and (staged / "gradprobe.py").is_file()
    where = f"obs://{BUCKET}/g/out/debug/"
    compared = runner.invoke(
        app, ["compare", where, where, "--format", "json", "--profile", "emulator"]
    )
    assert compared.exit_code == 0, compared.output
    gradients = json.loads(compared.stdout)["gradients"]
    assert gradients["steps"] == [0] and gradients["ranks"] == ["rank0"]
    assert gradients["layers"][0]["name"] == "conv.weight"

"""``majob submit --dump`` on the emulated ModelArts: the staged bootstrap dumps on the node, the
dump is uploaded with the outputs, and ``majob compare`` reads it from OBS against a local run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.pipeline.ledger import Ledger
from majob.precision.dumpconfig import for_local_run
from majob.runner.local import run_local
from majob.spec.load import load_spec

pytestmark = pytest.mark.slow
pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")

ROOT = Path(__file__).resolve().parents[3]
BUCKET = "majob-demo"
SPEC = f"""\
name: mnist-dump
code: {{dir: {ROOT / "examples" / "mnist"}, boot_file: train.py, obs: "obs://{BUCKET}/m/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u, nodes: 1}}
inputs: [{{name: data_url, obs: "obs://{BUCKET}/m/data/", local: {ROOT / "examples" / "data"}}}]
outputs: [{{name: train_url, obs: "obs://{BUCKET}/m/out/"}}]
hyperparameters: {{epochs: 1, lr: 0.01, batch_size: 64}}
precision: {{steps: [0, 1]}}
stages: {{debug: {{timeout: 5m}}}}
"""


@pytest.fixture
def cloud(cloud: EmulatedCloud, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> EmulatedCloud:
    """The emulated cloud, run from ``tmp_path``."""
    monkeypatch.chdir(tmp_path)
    return cloud


def test_a_dumped_emulated_job_matches_the_same_code_run_locally(
    tmp_path: Path, cloud: EmulatedCloud
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC, encoding="utf-8")
    runner = CliRunner()
    args = ["submit", str(spec), "--profile", "emulator", "--upload-inputs", "--wait", "--dump"]
    submitted = runner.invoke(app, args)
    assert submitted.exit_code == 0, submitted.output
    assert submitted.stdout.splitlines()[-1] == (
        f"[majob] precision dump: obs://{BUCKET}/m/out/debug/precision-dump/ with the train_url "
        "output (msprobe's messages in its msprobe-rank<R>.log); a precision run, not recorded "
        f"in the ledger; compare it: majob compare OTHER_RUN obs://{BUCKET}/m/out/debug/"
    )
    assert "Completed" in submitted.stdout.splitlines()[-2]  # stderr: the engine warning
    # The user's code dir was not touched: the bootstrap went up from a staged copy.
    assert not (ROOT / "examples" / "mnist" / "majob_precision").exists()
    # A dump run is a precision run, not the debug stage: the ledger (whose records open the
    # formal gate) has nothing of it.
    with Ledger(tmp_path / ".majob" / "ledger.db") as ledger:
        assert ledger.records("mnist-dump") == []
    # msprobe's messages went to its log in the dump, not into the job's log.
    assert "[INFO]" not in submitted.output

    local = run_local(
        load_spec(spec),
        runs_dir=tmp_path / "runs",
        on_line=lambda _: None,
        prepare_env=for_local_run,
    )
    compared = runner.invoke(
        app,
        [
            "compare",
            str(local.run_dir),
            f"obs://{BUCKET}/m/out/debug/",  # the debug stage's own folder
            "--format",
            "json",
            "--profile",
            "emulator",
        ],
    )
    assert compared.exit_code == 0, compared.output
    report = json.loads(compared.stdout)
    assert report["verdict"] == "pass"
    assert [p["step"] for p in report["pairs"]] == [0, 1]
    assert report["loss"]["first_step_beyond_tolerance"] is None
    # The node wrote msprobe's messages and the spec into the dump, uploaded with the output.
    fetched = {p.name for p in (tmp_path / ".majob" / "precision").rglob("*") if p.is_file()}
    assert {"msprobe-rank0.log", "run-spec.json"} <= fetched, sorted(fetched)[:20]
    assert report["spec_differences"] is not None
    # The configuration check: both sides wrote a pack; the same code, data, packages and seeds.
    configuration = report["configuration"]
    assert configuration["unknown"] == [] and configuration["warnings"] == [], configuration
    differing = [r["what"] for r in configuration["rows"] if r["a"] != r["b"]]
    assert differing == ["outputs[0].obs"], differing  # the debug stage's folder; nothing else

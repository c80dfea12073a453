"""``majob run --dump`` on a script that makes NaN at step 1: its summary names step 1 and the
API that made it, and ``majob compare`` against a clean run says B has NaN and fails (a real
run: torch and msprobe, tests/precision_corpus/train.py)."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow
pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")

ROOT = Path(__file__).resolve().parents[3]
MAJOB = str(Path(sys.executable).parent / "majob")
SPEC = f"""\
name: first-nan
code: {{dir: {ROOT / "tests" / "precision_corpus"}, boot_file: train.py, obs: "obs://bkt/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u}}
outputs: [{{name: train_url, obs: "obs://bkt/out/"}}]
precision: {{steps: [0, 1, 2], seed: 7}}
"""


def majob(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([MAJOB, *args], cwd=cwd, capture_output=True, text=True, check=False)


def test_the_run_summary_and_compare_name_step_1_and_the_api_that_made_the_nan(
    tmp_path: Path,
) -> None:
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    nan = majob(tmp_path, "run", "spec.yaml", "--dump", "--set", "hyperparameters.nan_step=1")
    assert nan.returncode == 0, nan.stdout + nan.stderr
    (line,) = [x for x in nan.stdout.splitlines() if "first NaN/Inf" in x]
    assert re.search(r"NaN in Torch\.log\.0\.forward output at step 1, \S+ \(the origin", line)
    source = (ROOT / "tests" / "precision_corpus" / "train.py").read_text(encoding="utf-8")
    log_line = next(i for i, x in enumerate(source.splitlines(), 1) if "torch.log(" in x)
    assert f"train.py:{log_line} in forward" in line  # the script's line of torch.log
    assert "the loss: NaN loss at step 1" in nan.stdout
    clean = majob(tmp_path, "run", "spec.yaml", "--dump")
    assert clean.returncode == 0 and "NaN" not in clean.stdout
    ids = [re.search(r"^run (\S+):", r.stdout, re.M) for r in (clean, nan)]
    compared = majob(tmp_path, "compare", *(m.group(1) for m in ids if m), "--format", "json")
    assert compared.returncode == 1, compared.stderr
    report = json.loads(compared.stdout)
    assert report["verdict"] == "fail" and report["nonfinite"]["golden"]["first"] is None
    first = report["nonfinite"]["target"]["first"]
    assert (first["step"], first["api"], first["origin"]) == (1, "Torch.log.0.forward", True)
    assert any(p.startswith("NaN/Inf in B only") for p in report["problems"])

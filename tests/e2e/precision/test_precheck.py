"""The API accuracy pre-check (``majob precheck``): msprobe's CPU benchmark against a tensor
dump's outputs. A dump whose one output was planted 5% off has that API, and only that one,
outside the standard, worst first; the bad inputs get one clear message each."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow  # torch and msprobe, in-process and in a majob process
torch = pytest.importorskip("torch")
pytest.importorskip("msprobe")

from majob.errors import UserInputError  # noqa: E402
from majob.precision.precheck import run_precheck  # noqa: E402


def _entry(tensor: Any, name: str) -> dict[str, Any]:
    return {
        "type": "torch.Tensor",
        "dtype": str(tensor.dtype),
        "shape": list(tensor.shape),
        "Max": float(tensor.max()),
        "Min": float(tensor.min()),
        "Mean": float(tensor.mean()),
        "Norm": float(tensor.norm()),
        "requires_grad": False,
        "data_name": name,
    }


def _dump(root: Path, *, planted: float = 1.0, task: str = "tensor") -> Path:
    """A one-step, one-rank tensor dump of relu and matmul; matmul's output times ``planted``."""
    rank = root / "precision-dump" / "step0" / "rank0"
    tensors = rank / "dump_tensor_data"
    tensors.mkdir(parents=True)
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(16, 32, generator=generator)
    w = torch.randn(32, 8, generator=generator)
    calls = {
        "Functional.relu.0.forward": ([x], torch.relu(x)),
        "Torch.matmul.0.forward": ([x, w], torch.matmul(x, w) * planted),
    }
    data = {}
    for key, (inputs, output) in calls.items():
        args = []
        for i, tensor in enumerate(inputs):
            name = f"{key}.input.{i}.pt"
            torch.save(tensor, tensors / name)
            args.append(_entry(tensor, name))
        torch.save(output, tensors / f"{key}.output.0.pt")
        data[key] = {
            "input_args": args,
            "input_kwargs": {},
            "output": [_entry(output, f"{key}.output.0.pt")],
        }
    document = {"task": task, "level": "L1", "framework": "pytorch", "dump_data_dir": str(tensors)}
    (rank / "dump.json").write_text(json.dumps({**document, "data": data}))
    return root / "precision-dump"


def test_a_planted_output_is_the_one_api_outside_the_standard(tmp_path: Path) -> None:
    result = run_precheck(_dump(tmp_path, planted=1.05), tmp_path / "out")
    by_api = {v.api: v for v in result.verdicts}
    assert by_api["Functional.relu.0"].status == "pass"
    (bad,) = result.failed
    assert (bad.api, bad.where, bad.status) == ("Torch.matmul.0", "step0/rank0", "error")
    assert bad.max_rel_error is not None and 0.04 < bad.max_rel_error < 0.06
    assert result.result_csvs[0].exists()


def test_an_exact_dump_passes(tmp_path: Path) -> None:
    result = run_precheck(_dump(tmp_path), tmp_path / "out")
    assert [v.status for v in result.verdicts] == ["pass", "pass"] and not result.failed


def test_a_statistics_dump_says_how_to_dump_tensors(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="a statistics dump holds no tensors") as refused:
        run_precheck(_dump(tmp_path, task="statistics"), tmp_path / "out")
    assert refused.value.hint is not None and "task: tensor" in refused.value.hint


def test_a_cut_dump_and_an_empty_folder_are_refused(tmp_path: Path) -> None:
    dump = _dump(tmp_path)
    (dump / "step0" / "rank0" / "dump.json").write_text('{"task": "tensor", "data": {')
    with pytest.raises(UserInputError, match="not a readable msprobe dump"):
        run_precheck(dump, tmp_path / "out")
    (tmp_path / "empty").mkdir()
    with pytest.raises(UserInputError, match="no msprobe dump"):
        run_precheck(tmp_path / "empty", tmp_path / "out")


def test_the_command_lists_the_failing_api_and_exits_1(tmp_path: Path) -> None:
    _dump(tmp_path, planted=1.05)
    done = subprocess.run(
        [sys.executable, "-m", "majob", "precheck", str(tmp_path), "--output", str(tmp_path / "o")],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert done.returncode == 1, done.stderr
    lines = done.stdout.splitlines()
    assert lines[1] == "2 API calls checked: 1 pass, 1 outside the standard, 0 skipped"
    assert lines[2].startswith("  error   Torch.matmul.0 (step0/rank0): max rel error 0.05")

"""``majob check --torch-version`` / ``--spec``: the target torch decides MA305's severity."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app

CUDA_SCRIPT = "import torch\nx = torch.zeros(2).cuda()\n"


def _check(tmp_path: Path, *options: str) -> tuple[int, str]:
    script = tmp_path / "train.py"
    script.write_text(CUDA_SCRIPT, encoding="utf-8")
    result = CliRunner().invoke(app, ["check", str(script), "--target", "npu", *options])
    return result.exit_code, result.output


def test_old_or_unknown_torch_needs_the_import(tmp_path: Path) -> None:
    for options in ([], ["--torch-version", "2.1"]):
        code, output = _check(tmp_path, *options, "--fail-on", "never")
        assert code == 0
        assert "MA305 error" in output


def test_torch_that_autoloads_torch_npu_gets_a_note(tmp_path: Path) -> None:
    code, output = _check(tmp_path, "--torch-version", "2.5.1", "--fail-on", "never")
    assert code == 0
    assert "MA305 note" in output


def test_the_spec_engine_version_gives_the_torch_version(tmp_path: Path) -> None:
    spec = Path(__file__).resolve().parents[3] / "job_specs" / "npu_resnet.yaml"  # pytorch_2.1.0
    code, output = _check(tmp_path, "--spec", str(spec), "--fail-on", "never")
    assert code == 0
    assert "MA305 error" in output


def test_an_unreadable_torch_version_is_one_clear_error(tmp_path: Path) -> None:
    code, output = _check(tmp_path, "--torch-version", "latest")
    assert code != 0
    assert "cannot read a torch version from 'latest'" in output

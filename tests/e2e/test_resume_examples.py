"""The MNIST and DDP examples resume after a rehearsed failure and end where an uninterrupted
run ends (torch: two tests, each three short runs)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app

SPECS = Path(__file__).resolve().parents[2] / "job_specs"
runner = CliRunner()


def test_mnist_resumes_from_its_checkpoint_half_way(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["run", str(SPECS / "mnist.yaml"), "--runs-dir", str(tmp_path), "--set",
         "hyperparameters.epochs=4", "--fail-at", "50%", "--expect-resume"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "every node killed at point 2 of loss" in result.output
    assert "resumed: yes, at point " in result.output
    assert "final accuracy" in result.output and "differs" not in result.output


def test_ddp_on_two_nodes_resumes_after_losing_node_1(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        ["run", str(SPECS / "ddp_resnet.yaml"), "--runs-dir", str(tmp_path), "--set",
         "hyperparameters.epochs=3", "--fail-at", "loss:2", "--node", "1", "--expect-resume"],
    )  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "worker-1 killed at point 2 of loss" in result.output
    assert "resumed: yes, at point " in result.output
    assert "rank 1: resumed from the checkpoint of epoch" in result.output

from __future__ import annotations

from pathlib import Path

import pytest

from majob.spec.load import load_spec
from tests.unit.spec.conftest import spec_problems


def _with_block(project: Path, block: str) -> Path:
    spec = project / "spec.yaml"
    spec.write_text(spec.read_text() + block)
    return spec


def test_absent_block_means_no_restarts(project: Path) -> None:
    spec = load_spec(project / "spec.yaml")
    assert spec.fault_tolerance.retries == 0
    assert spec.fault_tolerance.checkpoint_output is None


def test_checkpoint_folder_is_split_into_output_and_folder(project: Path) -> None:
    block = "fault_tolerance:\n  retries: 3\n  hang: true\n  checkpoints: train_url/ckpt\n"
    spec = load_spec(_with_block(project, block))
    assert spec.fault_tolerance.checkpoints == "train_url/ckpt/"
    assert spec.fault_tolerance.checkpoint_output == "train_url"
    assert spec.fault_tolerance.checkpoint_folder == "ckpt"


@pytest.mark.parametrize(
    ("block", "where", "says"),
    [
        ("fault_tolerance:\n  retries: 129\n", "fault_tolerance.retries", "128"),
        ("fault_tolerance:\n  retries: -1\n", "fault_tolerance.retries", "0"),
        ("fault_tolerance:\n  hang: true\n", "fault_tolerance", "needs retries"),
        ("fault_tolerance:\n  restart_on: any\n", "fault_tolerance", "needs retries"),
        ("fault_tolerance:\n  restart_on: always\n", "fault_tolerance.restart_on", "faults"),
        (
            "fault_tolerance:\n  retries: 1\n  checkpoints: ../ckpt/\n",
            "fault_tolerance.checkpoints",
            "<output name>/<folder>/",
        ),
        (
            "fault_tolerance:\n  retries: 1\n  checkpoints: model_url/ckpt/\n",
            "fault_tolerance.checkpoints",
            "'model_url' is not an output (outputs: train_url)",
        ),
        ("fault_tolerance:\n  retry: 1\n", "fault_tolerance.retry", ""),
    ],
)
def test_bad_blocks_point_at_the_field(project: Path, block: str, where: str, says: str) -> None:
    problems = spec_problems(_with_block(project, block))
    assert len(problems) == 1, problems
    assert f" {where}: " in problems[0]
    assert says in problems[0]

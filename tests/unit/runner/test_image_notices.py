"""What a local run says about the image it does not use."""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from pathlib import Path

from majob.runner.local import run_local
from majob.spec.models import JobSpec

MakeProject = Callable[..., JobSpec]

SCRIPT = """
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
print("trained")
"""


def test_a_custom_image_run_says_the_image_is_not_used(
    make_project: MakeProject, runs_dir: Path
) -> None:
    image = "swr.example.com/team/pytorch-cpu:2.1.0"
    spec = make_project(SCRIPT, image={"swr": image, "command": "python ${WORKSPACE}/train.py"})
    lines: list[str] = []
    result = run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    notice = (
        f"[majob] custom image {image} is not used locally: its boot command runs with this "
        f"machine's Python ({sys.executable}) and packages"
    )
    assert lines[0].startswith(notice), lines
    assert lines[1].endswith(
        "starting 1 node (python ${WORKSPACE}/train.py); the script's output follows once its imports are done"
    )
    assert lines[2:] == ["[worker-0] trained"]
    record = json.loads(result.record.read_text())
    assert record["notices"] == [lines[0].removeprefix("[majob] ")]


def test_a_preset_engine_run_has_no_image_notice(make_project: MakeProject, runs_dir: Path) -> None:
    lines: list[str] = []
    result = run_local(make_project(SCRIPT), runs_dir=runs_dir, on_line=lines.append)
    assert lines[1:] == ["[worker-0] trained"]
    assert result.notices == ()

"""``majob run --cache-size``: the local stage fails a run whose node writes past its /cache the
way the emulator fails the job (the same eviction text), with a non-zero exit and no
traceback; a run that stays under it passes."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from tests.e2e.conftest import CACHE_WRITER as SCRIPT

SPEC = """\
name: cache
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0}
resources: {flavor: modelarts.vm.cpu.8u}
hyperparameters: {cache: /cache/tmp, write: 5000}
"""


def _project(tmp_path: Path) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text(SCRIPT)
    spec = tmp_path / "spec.yaml"
    spec.write_text(SPEC)
    return spec


def test_a_run_past_its_cache_fails_with_the_eviction_text(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    env = {k: v for k, v in os.environ.items() if k != "MAJOB_DEBUG"}
    done = subprocess.run(
        [sys.executable, "-m", "majob", "run", str(spec), "--cache-size", "2kB"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr + done.stdout
    assert "worker-0: the node's local disk is full (4.9 KiB of inputs and /cache, " in done.stderr
    assert "capacity 2.0 KiB on modelarts.vm.cpu.8u): the container was evicted" in done.stderr
    assert f"wrote to {tmp_path}" in done.stdout  # /cache/tmp became the node's folder


def test_a_run_within_its_cache_passes(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    result = CliRunner().invoke(
        app, ["run", str(spec), "--cache-size", "10MB", "--runs-dir", str(tmp_path / "runs")]
    )
    assert result.exit_code == 0, result.output
    assert "cache/worker-0/tmp" in result.output and ": passed in " in result.output


def test_a_bad_cache_size_is_said_before_anything_runs(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    result = CliRunner().invoke(app, ["run", str(spec), "--cache-size", "lots"])
    assert result.exit_code == 2
    assert "--cache-size 'lots': not a size" in result.output
    assert not (tmp_path / ".majob").exists()

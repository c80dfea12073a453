"""Engine honesty: an emulated job says, in its log, which engine it stands in for and what it
did not check (it ran on this machine's Python, not the engine's), and the pipeline repeats it
in its summary; ``majob image check-env`` is a pre-flight warning of submit and the pipeline. The tiny project's spec asks for the pytorch_1.8.0 engine, whose Python is 3.7."""

from __future__ import annotations

import platform
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud

runner = CliRunner()
ENGINE = "PyTorch pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"
HERE = platform.python_version()
MINOR = ".".join(HERE.split(".")[:2])
STANDS_IN = (
    f"stands in for engine {ENGINE} on flavor modelarts.vm.cpu.8u: the code runs on this "
    "machine, not in the image"
)
NOT_CHECKED = (
    f"not checked: Python 3.7 of the engine: the job ran on Python {HERE} here, so code or "
    f"packages that need Python {MINOR} may fail there; the image's packages and their "
    "versions, its user and its file system"
)


def test_the_jobs_log_says_what_the_emulator_stands_in_for(
    project: Path, cloud: EmulatedCloud
) -> None:
    spec = str(project / "spec.yaml")
    result = runner.invoke(
        app, ["submit", spec, "--profile", "emulator", "--upload-inputs", "--wait"]
    )
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    # check-env as a pre-flight warning: this machine's Python is not the engine's 3.7.
    warning = result.stderr.splitlines()[0]
    assert warning.startswith(
        f"warning: the engine {ENGINE} does not match this environment (Python: {HERE} here, "
        "3.7 in the engine"  # and PyTorch, where torch is installed
    )
    assert warning.endswith(
        f"): code that runs here may fail there; `majob image check-env {spec}` says more"
    )
    assert f"[worker-0] [ModelArts Service Log][majob emulator] {STANDS_IN}" in lines
    assert f"[worker-0] [ModelArts Service Log][majob emulator] {NOT_CHECKED}" in lines


def test_the_pipeline_summary_repeats_it(project: Path, cloud: EmulatedCloud) -> None:
    spec = str(project / "spec.yaml")
    result = runner.invoke(
        app, ["pipeline", spec, "--profile", "emulator", "--upload-inputs", "--until", "debug"]
    )
    assert result.exit_code == 0, result.output
    assert f"[majob] warning: the engine {ENGINE} does not match this environment" in result.output
    summary = result.output.splitlines()[-4:]
    assert summary == [
        "[majob] debug ran on the emulator; a real job may still fail:",
        f"[majob]   {STANDS_IN}",
        f"[majob]   {NOT_CHECKED}",
        "[majob] pipeline passed: local and debug",
    ]

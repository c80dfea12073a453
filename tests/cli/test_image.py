"""``majob image ...`` and ``majob env pack`` through the CLI: output, exit codes, bad input."""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.spec.load import display_path

ROOT = Path(__file__).resolve().parents[2]
SPECS = ROOT / "tests" / "cli" / "image_specs"
runner = CliRunner()
HEAVY = ("obs", "huaweicloudsdkcore", "huaweicloudsdkmodelarts", "torch", "libcst", "numpy")


def _builders() -> ModuleType:
    path = ROOT / "tests" / "unit" / "image" / "image_tarballs.py"
    spec = importlib.util.spec_from_file_location("image_tarballs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


tarballs = _builders()


def test_help_imports_nothing_heavy() -> None:
    code = (
        "import sys\nfrom majob.cli.app import app\ntry:\n    app(['image', '--help'])\n"
        "except SystemExit:\n    pass\nprint('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    loaded = set(done.stderr.split())
    assert "majob.cli.image" in loaded
    heavy = sorted(
        m for m in loaded if m.split(".")[0] in (*HEAVY, "dockerfile_parse", "conda_pack")
    )
    assert heavy == []


# -- check-env ---------------------------------------------------------------------------

OLD_ENGINE = "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"


def test_check_env_json_for_a_preset_engine() -> None:
    result = runner.invoke(
        app,
        [
            "image",
            "check-env",
            str(ROOT / "job_specs" / "ddp_resnet.yaml"),
            "--format",
            "json",
            "--set",
            f"image.version={OLD_ENGINE}",
        ],
    )
    data = json.loads(result.stdout)
    # majob's own Python is 3.10+, the old engine's 3.7: never compatible here.
    assert data["verdict"] == "incompatible" and data["ok"] is False
    assert data["problems"][0].startswith("Python: ")
    assert data["image"] == f"PyTorch {OLD_ENGINE}"
    assert data["local"]["executable"] == sys.executable
    assert result.exit_code == 1


def test_check_env_text_for_a_custom_image() -> None:
    result = runner.invoke(
        app, ["image", "check-env", str(ROOT / "job_specs" / "custom_image.yaml")]
    )
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[1] == "image:  swr.cn-north-4.myhuaweicloud.com/majob-demo/pytorch-cpu:2.1.0"
    assert lines[2] == "result: unchecked"


def test_custom_image_without_command() -> None:
    path = SPECS / "custom_no_command.yaml"
    result = runner.invoke(app, ["image", "check-env", str(path)])
    assert result.exit_code == 2
    assert result.stderr == (
        f"error: {path}:5:1: image: a custom image needs image.command, e.g. "
        "'python ${MA_JOB_DIR}/...'\n"
    )


def test_unknown_engine_suggests_the_closest() -> None:
    path = SPECS / "unknown_engine.yaml"
    result = runner.invoke(app, ["image", "check-env", str(path)])
    assert result.exit_code == 2
    first, hint = result.stderr.splitlines()
    assert first == (
        f"error: {display_path(path)}: image.version: unknown preset engine PyTorch "
        "pytorch_1.9.0-cuda_11.1-py_3.7-ubuntu_18.04-x86_64"
    )
    assert hint.startswith(
        "error: hint: closest known: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64, "
        "horovod_0.22.1-pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"
    )


def test_check_env_with_a_python_that_does_not_exist(tmp_path: Path) -> None:
    result = runner.invoke(
        app,
        [
            "image",
            "check-env",
            str(ROOT / "job_specs" / "mnist.yaml"),
            "--python",
            str(tmp_path / "py"),
        ],
    )
    assert result.exit_code == 2
    assert "cannot run it" in result.stderr


# -- dockerfile --------------------------------------------------------------------------


def test_dockerfile_to_stdout_and_the_image_block_to_stderr() -> None:
    result = runner.invoke(app, ["image", "dockerfile", str(ROOT / "job_specs" / "mnist.yaml")])
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("# syntax=docker/dockerfile:1\n")
    assert "USER ma-user" in result.stdout
    assert "command: python ${MA_JOB_DIR}/code/train.py" in result.stderr  # code.obs ends in code/
    assert "replace ORGANIZATION" in result.stderr


def test_dockerfile_to_a_file_lints_clean(tmp_path: Path) -> None:
    out = tmp_path / "Dockerfile"
    swr = "swr.cn-north-4.myhuaweicloud.com/team/mnist:1"
    args = [
        "image",
        "dockerfile",
        str(ROOT / "job_specs" / "mnist.yaml"),
        "-o",
        str(out),
        "--swr",
        swr,
    ]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert f"  swr: {swr}\n" in result.stdout
    assert runner.invoke(app, ["image", "lint", str(out)]).stdout == f"{out}: clean\n"
    again = runner.invoke(app, args)
    assert again.exit_code == 2 and "exists" in again.stderr


# -- lint --------------------------------------------------------------------------------


def test_lint_findings_exit_1(tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text("FROM python:3.11\nCOPY . /code\nENV PYTHONUNBUFFERED=1\nUSER ma-user\n")
    result = runner.invoke(app, ["image", "lint", str(path), "--format", "json"])
    assert result.exit_code == 1
    [finding] = json.loads(result.stdout)
    assert (finding["file"], finding["line"], finding["rule"]) == (
        str(path),
        2,
        "code-or-data-copied",
    )


def test_lint_syntax_error_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "Dockerfile"
    path.write_text("FROM python:3.11\nRUNN pip install x\n")
    result = runner.invoke(app, ["image", "lint", str(path)])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == f"error: {path}:2: unknown instruction 'RUNN'"


# -- inspect -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", ["docker_save", "oci_layout"])
def test_inspect_text_and_limits(tmp_path: Path, kind: str) -> None:
    layers = [tarballs.layer({"a": b"x" * 5000}), tarballs.layer({"b": b"y"}, "gzip")]
    path = getattr(tarballs, kind)(
        tmp_path / "image.tar", layers, ["ADD base /", "RUN pip install b"]
    )
    result = runner.invoke(app, ["image", "inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines()[2].split()[:4] == ["1", "10.2", "kB", "10.2"]
    tripped = runner.invoke(app, ["image", "inspect", str(path), "--layer-size", "8kB"])
    assert tripped.exit_code == 1
    assert (
        "  error: layer 1 is 10.2 kB, over 8 kB per layer: split the step that made it; "
        "created by: ADD base /"
    ) in tripped.stdout.splitlines()


def test_inspect_json(tmp_path: Path) -> None:
    path = tarballs.oci_layout(tmp_path / "i.tar", [tarballs.layer({"a": b"1"})], ["RUN a"])
    result = runner.invoke(app, ["image", "inspect", str(path), "--format", "json"])
    [report] = json.loads(result.stdout)
    assert report["layers"][0]["entries"] == 1 and report["ok"] is True


def test_inspect_non_image_tarball(tmp_path: Path) -> None:
    path = tmp_path / "junk.tar"
    path.write_bytes(b"\x00garbage" * 100)
    result = runner.invoke(app, ["image", "inspect", str(path)])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {path}: not a")


def test_inspect_bad_size_option(tmp_path: Path) -> None:
    result = runner.invoke(app, ["image", "inspect", str(tmp_path / "x.tar"), "--max-size", "big"])
    assert result.exit_code == 2
    assert result.stderr.splitlines()[0] == "error: 'big' is not a size"


# -- env pack ----------------------------------------------------------------------------


def test_env_pack_without_conda_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    result = runner.invoke(app, ["env", "pack", "--name", "ml"])
    assert result.exit_code == 2
    assert result.stderr == (
        "error: conda is not on PATH, so environment 'ml' cannot be found by name\n"
        "error: hint: pass --prefix /path/to/env (the directory holding conda-meta/)\n"
    )


def test_env_pack_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "conda_pack", None)
    result = runner.invoke(app, ["env", "pack"])
    assert result.exit_code == 2
    assert result.stderr.splitlines() == [
        "error: majob env pack needs conda-pack",
        "error: hint: pip install 'majob[condapack]' (conda-pack; conda itself must be on PATH)",
    ]

"""Offline ``majob validate`` checks the flavor and the engine against what majob knows on
disk (its catalogue and the service's cached lists): unknown ids are warnings with the closest
known one, at the line they are written; the spec still validates (exit 0)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

runner = CliRunner()

SPEC = """\
name: tiny
code:
  dir: code
  boot_file: train.py
image:
  engine: {engine}
  version: pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64
resources:
  flavor: {flavor}
"""


@pytest.fixture(autouse=True)
def _empty_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    cache = tmp_path / "cache"
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(cache))
    return cache


def _spec(tmp_path: Path, engine: str = "PyTorch", flavor: str = "modelarts.vm.cpu.8u") -> Path:
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(engine=engine, flavor=flavor))
    return path


def test_a_known_flavor_and_engine_pass_without_a_warning(tmp_path: Path) -> None:
    result = runner.invoke(app, ["validate", str(_spec(tmp_path))])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output
    assert result.stdout.startswith(f"ok: {tmp_path / 'spec.yaml'}: tiny")


def test_unknown_engine_and_flavor_are_warnings_with_did_you_mean(tmp_path: Path) -> None:
    spec = _spec(tmp_path, engine="Pytorch", flavor="modelarts.vm.cpu.9u")
    result = runner.invoke(app, ["validate", str(spec)])
    assert result.exit_code == 0, result.output
    lines = result.stderr.splitlines()
    assert lines[0] == (
        f"warning: {spec}:9:11: resources.flavor: 'modelarts.vm.cpu.9u' is not a flavor "
        "known to majob's catalogue; did you mean 'modelarts.vm.cpu.8u'? (`majob validate "
        "--online` checks the service's own list)"
    )
    assert lines[1] == (
        f"warning: {spec}:6:11: image.engine: 'Pytorch' is not an engine known to majob's "
        "catalogue; did you mean 'PyTorch'? (`majob validate --online` checks the service's own "
        "list)"
    )
    assert len(lines) == 2
    assert result.stdout.startswith(f"ok: {spec}: tiny")


def test_a_value_from_set_is_not_placed_in_the_file(tmp_path: Path) -> None:
    spec = _spec(tmp_path)
    result = runner.invoke(
        app, ["validate", str(spec), "--set", "image.version=pytorch_9.9.9-cpu-py_3.7"]
    )
    assert result.exit_code == 0, result.output
    assert result.stderr.startswith(
        f"warning: {spec}: image.version: 'pytorch_9.9.9-cpu-py_3.7' is not a version of "
        "PyTorch known to majob's catalogue; choose one of: "
        "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64, "
        "pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64 ("
    )


def test_the_services_cached_list_counts_too(tmp_path: Path, _empty_cache: Path) -> None:
    flavor = {"id": "modelarts.vm.cpu.9u", "name": "", "type": "CPU", "max_num": 1}
    cached = {"flavors": [flavor], "engines": []}
    (_empty_cache / "service").mkdir(parents=True)
    (_empty_cache / "service" / "offerings-0123456789abcdef.json").write_text(json.dumps(cached))
    result = runner.invoke(app, ["validate", str(_spec(tmp_path, flavor="modelarts.vm.cpu.9u"))])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.output

"""A tiny project (no torch) to run through the local runner: code dir, data, output."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from majob.spec.models import JobSpec

MakeProject = Callable[..., JobSpec]


@pytest.fixture
def make_project(tmp_path: Path) -> MakeProject:
    """``make_project(script, files={...}, **spec_fields)``: write ``proj/train.py`` (dedented)
    and extra files, a ``data/`` input with one file, and return a spec that runs it."""

    def make(script: str, *, files: dict[str, str] | None = None, **changes: Any) -> JobSpec:
        code = tmp_path / "proj"
        code.mkdir(exist_ok=True)
        (code / "train.py").write_text(textwrap.dedent(script))
        for name, text in (files or {}).items():
            (code / name).parent.mkdir(parents=True, exist_ok=True)
            (code / name).write_text(text)
        data = tmp_path / "data"
        data.mkdir(exist_ok=True)
        (data / "numbers.txt").write_text("1 2 3\n")
        spec: dict[str, Any] = {
            "name": "tiny",
            "code": {"dir": str(code), "boot_file": "train.py"},
            "image": {"engine": "PyTorch", "version": "pytorch_1.8.0"},
            "resources": {"flavor": "modelarts.vm.cpu.8u"},
            "inputs": [{"name": "data_url", "obs": "obs://bucket/data/", "local": str(data)}],
            "outputs": [
                {"name": "train_url", "obs": "obs://bucket/out/", "local": str(tmp_path / "out")}
            ],
        }
        spec.update(changes)
        return JobSpec.model_validate(spec)

    return make


@pytest.fixture
def runs_dir(tmp_path: Path) -> Path:
    return tmp_path / "runs"

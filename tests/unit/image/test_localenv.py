from __future__ import annotations

import importlib.metadata
import os
import stat
import sys
from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.image.localenv import imported_modules, probe


def test_imports_found_with_ast(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(
        "import os, numpy as np\nimport torch.distributed as dist\nfrom PIL import Image\n"
        "from . import helpers\nfrom models.resnet import ResNet\nimport helpers\n"
        "from __future__ import annotations\n"
    )
    (tmp_path / "helpers.py").write_text("import yaml\n")
    (tmp_path / "models").mkdir()
    (tmp_path / "models" / "resnet.py").write_text("import torchvision\n")
    (tmp_path / "broken.py").write_text("def (:\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "x.py").write_text("import should_not_be_seen\n")
    # Local modules (helpers, models) and relative imports are the project's own.
    assert imported_modules(tmp_path) == ["PIL", "numpy", "os", "torch", "torchvision", "yaml"]


def test_probe_of_this_interpreter(tmp_path: Path) -> None:
    env = probe(sys.executable, ["os", "json", "pytest", "no_such_module_here"])
    assert env.python == ".".join(map(str, sys.version_info[:3]))
    assert env.torch == importlib.metadata.version("torch")
    # The standard library is left out; third-party modules say whether they are installed.
    assert {t.module: t.found for t in env.third_party} == {
        "no_such_module_here": False,
        "pytest": True,
    }
    [pytest_info] = [t for t in env.third_party if t.module == "pytest"]
    assert pytest_info.requirement == f"pytest=={importlib.metadata.version('pytest')}"


def test_probe_reads_torch_cuda_without_importing_torch(tmp_path: Path) -> None:
    # A fake torch that fails if imported: the probe must read its version.py as text.
    site = tmp_path / "site"
    (site / "torch").mkdir(parents=True)
    (site / "torch" / "__init__.py").write_text("raise RuntimeError('torch was imported')\n")
    (site / "torch" / "version.py").write_text(
        "from typing import Optional\n__version__ = '2.1.0+cu121'\ndebug = False\n"
        "cuda: Optional[str] = '12.1'\ngit_version = 'abc'\n"
    )
    dist = site / "torch-2.1.0+cu121.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: torch\nVersion: 2.1.0+cu121\n")
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nPYTHONPATH={site} exec {sys.executable} "$@"\n')
    wrapper.chmod(wrapper.stat().st_mode | stat.S_IEXEC)
    env = probe(str(wrapper), ["torch"])
    assert (env.torch, env.torch_release, env.cuda) == ("2.1.0+cu121", "2.1.0", "12.1")
    assert [(t.module, t.found) for t in env.third_party] == [("torch", True)]


def test_an_interpreter_that_cannot_run(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match=r"--python .*nope: cannot run it"):
        probe(str(tmp_path / "nope"), [])


def test_an_interpreter_that_fails(tmp_path: Path) -> None:
    script = tmp_path / "python"
    script.write_text("#!/bin/sh\necho 'broken install' >&2\nexit 3\n")
    script.chmod(0o755)
    assert os.access(script, os.X_OK)
    with pytest.raises(UserInputError, match="the probe failed: broken install"):
        probe(str(script), [])

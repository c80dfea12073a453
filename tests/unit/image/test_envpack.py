from __future__ import annotations

import json
import sys
import tarfile
from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.image.envpack import INSTALL_HINT, advice, pack_env


def conda_prefix(root: Path) -> Path:
    """A minimal conda environment conda-pack accepts: one package, two files."""
    prefix = root / "demo-env"
    (prefix / "conda-meta").mkdir(parents=True)
    (prefix / "bin").mkdir()
    (prefix / "bin" / "python").write_text("#!/bin/sh\n")
    (prefix / "lib").mkdir()
    (prefix / "lib" / "x.py").write_text("print(1)\n")
    (prefix / "conda-meta" / "history").write_text("")
    package = {
        "name": "demo",
        "version": "1.0",
        "build": "0",
        "build_number": 0,
        "url": "https://conda.anaconda.org/conda-forge/linux-64/demo-1.0-0.tar.bz2",
        "files": ["lib/x.py", "bin/python"],
        "link": {"source": str(root / "no-cache"), "type": 1},
    }
    (prefix / "conda-meta" / "demo-1.0-0.json").write_text(json.dumps(package))
    return prefix


def test_missing_conda_pack_gives_the_install_hint(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "conda_pack", None)  # as if not installed
    with pytest.raises(UserInputError, match="needs conda-pack") as caught:
        pack_env("base", None, None)
    assert caught.value.hint == INSTALL_HINT


def test_a_name_needs_conda_on_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(UserInputError, match="conda is not on PATH, so environment 'ml'") as caught:
        pack_env("ml", None, None)
    assert caught.value.hint is not None and "--prefix" in caught.value.hint


def test_name_and_prefix_together(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match="not both"):
        pack_env("ml", tmp_path, None)


def test_not_a_conda_env(tmp_path: Path) -> None:
    with pytest.raises(UserInputError, match=r"conda-pack: Path .* is not a conda environment"):
        pack_env(None, tmp_path, tmp_path / "out.tar.gz")


def test_packs_a_prefix_and_advises(tmp_path: Path) -> None:
    prefix = conda_prefix(tmp_path)
    packed = pack_env(None, prefix, tmp_path / "env.tar.gz")
    assert packed.archive == tmp_path / "env.tar.gz" and packed.size > 0
    with tarfile.open(packed.archive) as tar:
        names = set(tar.getnames())
    assert {"bin/python", "lib/x.py", "bin/conda-unpack"} <= names
    # conda-pack's warning (the package cache is gone) comes back as one line, not a warning.
    assert any(note.startswith("Conda-managed packages were found") for note in packed.notes)
    text = "\n".join(advice(packed))
    assert "no `conda activate`" in text
    assert "tar -xzf /home/ma-user/modelarts/inputs/env_url_0/env.tar.gz -C /cache/env" in text
    assert "/cache/env/bin/conda-unpack && /cache/env/bin/python ${MA_JOB_DIR}/" in text
    with pytest.raises(UserInputError, match=r"env\.tar\.gz exists"):
        pack_env(None, prefix, tmp_path / "env.tar.gz")
    assert pack_env(None, prefix, tmp_path / "env.tar.gz", force=True).size > 0

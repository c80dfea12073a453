"""Fixtures of the image tests: the tarball builders of image_tarballs.py."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest


def load_builders() -> ModuleType:
    path = Path(__file__).with_name("image_tarballs.py")
    spec = importlib.util.spec_from_file_location("image_tarballs", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def tarballs() -> ModuleType:
    return load_builders()

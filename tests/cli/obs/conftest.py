"""``majob obs`` against the fake OBS: the CLI reads the endpoint and keys from ``obs_env``
(the fixtures come from ``majob.pytest_plugin``)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "majob-cache"
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(path))
    return path

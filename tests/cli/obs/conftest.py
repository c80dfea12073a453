"""``majob obs`` against the fake OBS: the CLI reads the endpoint and keys from ``obs_env``."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.testing import fake_obs_server, obs_env, obs_store

__all__ = ["fake_obs_server", "obs_env", "obs_store"]


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "majob-cache"
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(path))
    return path

"""Sync end-to-end: the real esdk-obs-python client (``ObsObjectStore``) against the fake OBS.

The fake and the store come from ``majob.pytest_plugin``.
"""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Hash cache and upload records of this test only (never the user's ~/.cache)."""
    path = tmp_path / "majob-cache"
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(path))
    return path

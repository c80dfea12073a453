"""Every test gets its own pipeline ledger: commands that record stages (``majob pipeline``,
``majob submit --wait``) must never write into the checkout's ``.majob/ledger.db``."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.pipeline.ledger import LEDGER_VARIABLE


@pytest.fixture(autouse=True)
def _own_ledger(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path_factory.mktemp("ledger") / "ledger.db"
    monkeypatch.setenv(LEDGER_VARIABLE, str(path))
    return path

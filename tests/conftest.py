"""Every test gets its own pipeline ledger and its own emulator state dir: commands that record
stages (``majob pipeline``, ``majob submit --wait``) must never write into the checkout's
``.majob/ledger.db``, and nothing a test starts or looks for may be the user's own emulator (whose
state is in the user's data dir)."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.pipeline.ledger import LEDGER_VARIABLE
from majob.spec.emulator_state import STATE_DIR_VARIABLE


@pytest.fixture(autouse=True)
def _own_ledger(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path_factory.mktemp("ledger") / "ledger.db"
    monkeypatch.setenv(LEDGER_VARIABLE, str(path))
    return path


@pytest.fixture(autouse=True)
def _own_emulator_dir(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Path:
    data = tmp_path_factory.mktemp("data")
    monkeypatch.setenv("MAJOB_DATA_DIR", str(data))
    monkeypatch.setenv(STATE_DIR_VARIABLE, str(data / "emulator"))
    return data / "emulator"

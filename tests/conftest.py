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


class Chromium:
    """Headless Chromium: the DOM it builds from a page, and a screenshot of it."""

    def __init__(self, executable: str) -> None:
        import os

        self.flags = [executable, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]
        # As the test started: a test may point TMPDIR somewhere deep, and Chromium's socket
        # path under it must stay short.
        self.env = dict(os.environ)

    def dom(self, page: Path) -> str:
        import subprocess

        done = subprocess.run(
            [*self.flags, "--dump-dom", page.as_uri()],
            capture_output=True, text=True, timeout=120, env=self.env,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr[-2000:]
        return done.stdout

    def screenshot(self, page: Path, out: Path, size: str = "1000,1400") -> Path:
        import subprocess

        subprocess.run(
            [*self.flags, f"--screenshot={out}", f"--window-size={size}", page.as_uri()],
            capture_output=True, timeout=120, check=True, env=self.env,
        )  # fmt: skip
        return out


@pytest.fixture
def chromium() -> Chromium:
    """Headless Chromium, or a skip that says loudly what is then not checked."""
    import shutil

    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        pytest.skip("chromium is not installed: what the HTML pages look like is NOT checked "
                    "(apt-get install chromium; .ci/run installs it)")  # fmt: skip
    return Chromium(executable)

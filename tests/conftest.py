"""Every test gets its own pipeline ledger and its own emulator state dir: commands that record
stages (``majob pipeline``, ``majob submit --wait``) must never write into the checkout's
``.majob/ledger.db``, and nothing a test starts or looks for may be the user's own emulator (whose
state is in the user's data dir)."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest

# One intra-op thread per torch process. Its extra threads spin while they wait for work: with
# test workers side by side on two cores (pytest-xdist) each one burns a core for nothing, and
# the MNIST example took three times the CPU it takes alone. torchrun sets the same for several
# processes on one machine. A value set by whoever runs the tests is kept.
os.environ.setdefault("OMP_NUM_THREADS", "1")

# A suite started in the background by a shell without job control (`make test &` in a script,
# some CI runners) inherits SIGINT ignored, and so would every majob a test starts: the tests of
# Ctrl-C would then see it ignored (a sweep ran to its end, a run outlived its 30 s). An ignored
# signal stays ignored across exec, a handled one does not: handled here, the children get the
# default, as from a terminal.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)

from majob.pipeline.ledger import LEDGER_VARIABLE
from majob.spec.emulator_state import STATE_DIR_VARIABLE


@pytest.fixture(autouse=True)
def _own_ledger(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path_factory.mktemp("ledger") / "ledger.db"
    monkeypatch.setenv(LEDGER_VARIABLE, str(path))
    return path


@pytest.fixture(autouse=True)
def _own_user_dirs(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Caches (file hashes, upload records, offerings) and configuration (profiles, credentials)
    of the test's own: tests run side by side in several workers, and none may read or write the
    user's (a developer's own profiles.yaml would change what a test sees)."""
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path_factory.mktemp("cache")))
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path_factory.mktemp("config")))


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The slow tests first (those marked ``slow``: multi-process, torch). With workers side by
    side (``make test`` runs pytest-xdist, handing out two tests at a time), a long test started
    last keeps the whole run waiting for it; started first, the short ones fill the other
    workers around it. Every worker sorts the same collection the same way."""
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)

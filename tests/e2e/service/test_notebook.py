"""Inside a ModelArts notebook: the compiled Estimator call, run by a strict stand-in SDK that
forwards to the emulated ModelArts."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.service.notebook import notebook_sdk_available, submit_in_notebook
from majob.spec.load import load_spec
from majob.spec.profiles import Profile
from majob.storage.sync import sync_code, sync_dir
from majob.storage.uri import ObsUri

STANDIN = Path(__file__).parent / "standin"


@pytest.fixture
def notebook(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """``import modelarts`` works (the stand-in) for the test, and not after it."""
    assert not notebook_sdk_available()
    monkeypatch.syspath_prepend(str(STANDIN))
    yield
    for name in [n for n in sys.modules if n == "modelarts" or n.startswith("modelarts.")]:
        del sys.modules[name]


def test_submit_through_the_estimator(
    notebook: None, project: Path, profile: Profile, service, store
) -> None:
    assert notebook_sdk_available()
    spec = load_spec(project / "spec.yaml", profile=profile)
    sync_code(spec, store)
    sync_dir(store, project / "data", ObsUri.parse("obs://majob-demo/tiny/data/"))

    job_id = submit_in_notebook(spec, "debug")

    deadline = time.monotonic() + 60
    while not (job := service.get(job_id)).finished and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.name == "tiny-debug"
    assert job.phase == "Completed", job
    assert store.get_bytes("majob-demo", "tiny/out/out.txt") == b"PAYLOAD"

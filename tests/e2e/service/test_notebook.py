"""Inside a ModelArts notebook: the compiled Estimator call, run by a strict stand-in SDK that
forwards to the emulated ModelArts."""

from __future__ import annotations

import socket
import sys
import traceback
from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.errors import ServiceError
from majob.service.code import sync_code
from majob.service.notebook import notebook_sdk_available, submit_in_notebook
from majob.spec.load import load_spec
from majob.spec.profiles import Profile
from majob.storage.sync import sync_dir
from majob.storage.uri import ObsUri
from majob.testing import wait_until

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

    job = wait_until(lambda: (j := service.get(job_id)).finished and j, "the job to end")
    assert job.name == "tiny-debug"
    assert job.phase == "Completed", job
    assert store.get_bytes("majob-demo", "tiny/out/out.txt") == b"PAYLOAD"


def test_a_failed_notebook_submit_masks_the_spec_secrets_it_quotes(
    notebook: None, project: Path, profile: Profile, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The token is the very text the failure quotes (the service is unreachable): neither the
    # error nor what it is chained to (MAJOB_DEBUG=1 prints both) shows it.
    secret = "Connection refused"
    monkeypatch.setenv("TOKEN", secret)
    spec_file = project / "spec.yaml"
    spec_file.write_text(spec_file.read_text() + "env: {API_TOKEN: '${TOKEN}'}\n")
    spec = load_spec(spec_file, profile=profile)
    from modelarts.session import Session  # the stand-in

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    session = Session()
    session.modelarts_endpoint = f"http://127.0.0.1:{port}"
    with pytest.raises(ServiceError) as caught:
        submit_in_notebook(spec, "debug", session)
    assert "***" in caught.value.message
    assert secret not in "".join(traceback.format_exception(caught.value))
    assert caught.value.__context__ is None

"""The OBS SDK is loaded without ``requests`` and without its ``__init__`` (start-up), and its
requests mode and the names only that ``__init__`` sets still work."""

from __future__ import annotations

import subprocess
import sys

SCRIPT = """
import sys
from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from majob.testing import FAKE_BUCKET, fake_obs_server_running, obs_store_for

with fake_obs_server_running() as server, obs_store_for(server) as store:
    store.put_bytes(FAKE_BUCKET, "a.txt", b"hello")
    assert [o.key for o in store.list_all(FAKE_BUCKET, "")] == ["a.txt"]
    assert "requests" not in sys.modules, "the SDK loaded requests"
    assert "Crypto" not in sys.modules and "obs.crypto_client" not in sys.modules
    import obs
    import obs.client

    assert obs.ObsClient is obs.client.ObsClient
    from obs import CryptoObsClient, LogConf  # set by the SDK's own __init__, run on first use

    assert issubclass(CryptoObsClient, obs.ObsClient) and LogConf is obs.ilog.LogConf
    assert "Crypto" in sys.modules and obs.PutObjectHeader is obs.model.PutObjectHeader
    assert not hasattr(obs, "NoSuchName")
    import requests

    # The SDK's own requests mode (majob never uses it): the real session, the real adapter.
    client = obs.ObsClient(
        access_key_id=DEFAULT_ACCESS_KEY, secret_access_key=DEFAULT_SECRET_KEY,
        server=server.endpoint, signature="v2", use_http_conns=True,
    )
    adapter = client.session.session.adapters["http://"]
    assert isinstance(adapter, requests.adapters.HTTPAdapter), type(adapter).__mro__
    assert client.getObject(FAKE_BUCKET, "a.txt", loadStreamInMemory=True).body.buffer == b"hello"
    import obs.http
    assert obs.http.requests.RequestException is requests.RequestException
    client.close()
print("ok")
"""


def test_sdk_loads_without_requests_and_its_requests_mode_still_works() -> None:
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", SCRIPT], capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "ok"

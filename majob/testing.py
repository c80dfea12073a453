"""What tests import, majob's own and users': a fake OBS and stores wired to it.

Use the fixtures by importing them into a ``conftest.py``::

    from majob.testing import fake_obs_server, obs_env, obs_store  # noqa: F401

``fake_obs_server`` runs the fake in a thread of the test process, with the bucket
``FAKE_BUCKET`` created; ``obs_store`` is an ``ObsObjectStore`` (the real esdk-obs-python client)
pointed at it; ``obs_env`` sets the environment variables the CLI reads. ``fake_obs_process``
starts the fake as its own process (as a benchmark or a crash test needs) and drives its faults
and request log over HTTP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.request
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer, fake_obs
from majob.storage.config import Credentials, ObsConfig, Signature
from majob.storage.obs import ObsObjectStore

FAKE_BUCKET = "majob-test"
FAKE_CREDENTIALS = Credentials(DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, source="test")


def obs_config(endpoint: str, *, signature: Signature = "v4", **settings: Any) -> ObsConfig:
    """An ``ObsConfig`` for the fake at ``endpoint`` with its default credentials."""
    settings.setdefault("credentials", FAKE_CREDENTIALS)
    settings.setdefault("timeout", 10.0)
    return ObsConfig(endpoint=endpoint, signature=signature, **settings)


@pytest.fixture
def fake_obs_server() -> Iterator[FakeObsServer]:
    """A fake OBS in this process (in memory) with the bucket ``FAKE_BUCKET``."""
    with fake_obs(buckets=(FAKE_BUCKET,)) as server:
        yield server


@pytest.fixture
def obs_store(fake_obs_server: FakeObsServer) -> Iterator[ObsObjectStore]:
    """The real OBS backend talking to ``fake_obs_server``."""
    store = ObsObjectStore(obs_config(fake_obs_server.endpoint))
    try:
        yield store
    finally:
        store.close()


@pytest.fixture
def obs_env(fake_obs_server: FakeObsServer, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """Environment variables that point majob (CLI, ``open_store``) at ``fake_obs_server``."""
    env = {
        "MAJOB_OBS_ENDPOINT": fake_obs_server.endpoint,
        "HUAWEICLOUD_SDK_AK": DEFAULT_ACCESS_KEY,
        "HUAWEICLOUD_SDK_SK": DEFAULT_SECRET_KEY,
        "MAJOB_OBS_TIMEOUT": "10",
    }
    monkeypatch.delenv("HUAWEICLOUD_SDK_SECURITY_TOKEN", raising=False)
    monkeypatch.delenv("MAJOB_OBS_REGION", raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    return env


class FakeObsProcess:
    """A fake OBS running as its own process; faults and the log go over its control API."""

    def __init__(self, process: subprocess.Popen[str], endpoint: str) -> None:
        self.process = process
        self.endpoint = endpoint

    def _control(self, method: str, what: str, payload: object = None) -> Any:
        data = json.dumps(payload).encode("utf-8") if payload is not None else None
        request = urllib.request.Request(f"{self.endpoint}/_majob/{what}", data=data, method=method)
        with urllib.request.urlopen(request, timeout=10) as response:
            return json.loads(response.read() or b"null")

    def add_fault(self, **rule: Any) -> dict[str, Any]:
        """Add a fault rule (the fields of ``FaultRule``)."""
        result: dict[str, Any] = self._control("POST", "faults", rule)
        return result

    def clear_faults(self) -> None:
        self._control("DELETE", "faults")

    def log(self) -> list[dict[str, Any]]:
        """The requests seen so far (dicts with the fields of ``LoggedRequest``)."""
        entries: list[dict[str, Any]] = self._control("GET", "log")
        return entries

    def clear_log(self) -> None:
        self._control("DELETE", "log")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stdout is not None:
            self.process.stdout.close()


@contextmanager
def fake_obs_process(
    *,
    data_dir: Path | None = None,
    buckets: tuple[str, ...] = (FAKE_BUCKET,),
    credentials: Mapping[str, str] | None = None,
    extra_args: tuple[str, ...] = (),
) -> Iterator[FakeObsProcess]:
    """Run ``python -m majob.emulator.obs`` on a free port for the duration of the block."""
    command = [sys.executable, "-m", "majob.emulator.obs", "--port", "0"]
    if data_dir is not None:
        command += ["--data", str(data_dir)]
    for name in buckets:
        command += ["--bucket", name]
    for access_key, secret_key in (credentials or {}).items():
        command += ["--credential", f"{access_key}:{secret_key}"]
    command += list(extra_args)
    process = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    assert process.stdout is not None
    endpoint = process.stdout.readline().strip()
    fake = FakeObsProcess(process, endpoint)
    try:
        if not endpoint.startswith("http://"):
            raise RuntimeError(f"the fake OBS process did not start (exit {process.poll()})")
        yield fake
    finally:
        fake.stop()


__all__ = [
    "FAKE_BUCKET",
    "FAKE_CREDENTIALS",
    "FakeObsProcess",
    "fake_obs_process",
    "fake_obs_server",
    "obs_config",
    "obs_env",
    "obs_store",
]


# -- the emulated cloud (fake OBS + fake ModelArts) -------------------------------------------

from majob.emulator.cloud import EmulatedCloud, emulated_cloud  # noqa: E402
from majob.emulator.endpoints import EmulatorEndpoints  # noqa: E402


@pytest.fixture
def emulated_cloud_env(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Iterator[EmulatorEndpoints]:
    """Both fakes in this process, found by ``--profile emulator`` (``MAJOB_EMULATOR_DIR`` points
    at their state; an empty config dir keeps a user's own profiles out)."""
    state_dir = tmp_path / "emulator"
    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(state_dir))
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    with emulated_cloud(state_dir) as endpoints:
        yield endpoints


__all__ += ["EmulatedCloud", "emulated_cloud", "emulated_cloud_env"]

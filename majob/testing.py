"""What tests import, majob's own and users': emulators and clients wired to them.

Everything here is a plain context manager or helper: it needs no pytest. The pytest fixtures
over them live in ``majob.pytest_plugin``, which pytest loads by itself once majob is installed
(the ``pytest11`` entry point; ``pip install 'majob[testing]'`` brings pytest and the OBS SDK).

OBS::

    with fake_obs_server_running() as server, obs_store_for(server) as store:
        store.put_bytes(FAKE_BUCKET, "k", b"data")          # the real esdk-obs-python client
    with fake_obs_server_running() as server, obs_environment(server):
        ...                                                   # the CLI and open_store use it

``fake_obs_process`` starts the fake as its own process (as a benchmark or a crash test needs)
and drives its faults and request log over HTTP. Fixtures of the same names without the
suffixes: ``fake_obs_server``, ``obs_store``, ``obs_env``.

The emulated cloud (fake OBS + fake ModelArts that really runs the jobs)::

    with emulated_cloud(tmp_dir) as endpoints:   # both fakes in threads, on free ports
        ...                                       # endpoints.obs, endpoints.modelarts, keys
    with emulated_cloud_environment(tmp_dir) as cloud:  # and ``--profile emulator`` finds it
        cloud.modelarts.add_fault(status=503, count=1)  # the servers themselves

and the fixtures ``emulated_cloud_servers`` (that ``EmulatedCloud``) and ``emulated_cloud_env``
(its endpoints). ``wait_until`` polls for what a test waits on (a job's phase, a file) with a
deadline instead of fixed sleeps.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from majob.emulator.cloud import EmulatedCloud, emulated_cloud
from majob.emulator.defaults import DEFAULT_BUCKETS
from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, FakeObsServer, fake_obs
from majob.emulator.statefile import EmulatorEndpoints
from majob.storage.config import Credentials, ObsConfig, Signature

if TYPE_CHECKING:
    from majob.storage.obs import ObsObjectStore

FAKE_BUCKET = "majob-test"
T = TypeVar("T")
FAKE_CREDENTIALS = Credentials(DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY, source="test")


def obs_config(endpoint: str, *, signature: Signature = "v4", **settings: Any) -> ObsConfig:
    """An ``ObsConfig`` for the fake at ``endpoint`` with its default credentials."""
    settings.setdefault("credentials", FAKE_CREDENTIALS)
    settings.setdefault("timeout", 10.0)
    return ObsConfig(endpoint=endpoint, signature=signature, **settings)


# -- OBS ---------------------------------------------------------------------------------------


@contextmanager
def fake_obs_server_running(
    buckets: tuple[str, ...] = (FAKE_BUCKET,),
) -> Iterator[FakeObsServer]:
    """A fake OBS in this process (in memory, a thread) with ``buckets`` created."""
    with fake_obs(buckets=buckets) as server:
        yield server


@contextmanager
def obs_store_for(server: FakeObsServer) -> Iterator[ObsObjectStore]:
    """The real OBS backend (esdk-obs-python) talking to ``server``; closed at the end."""
    from majob.storage.obs import ObsObjectStore  # imports the OBS SDK: only when asked for

    store = ObsObjectStore(obs_config(server.endpoint))
    try:
        yield store
    finally:
        store.close()


# Variables of this machine that would point majob elsewhere than the fake.
_OBS_VARIABLES_CLEARED = ("HUAWEICLOUD_SDK_SECURITY_TOKEN", "MAJOB_OBS_REGION")


@contextmanager
def obs_environment(server: FakeObsServer) -> Iterator[dict[str, str]]:
    """Set the environment variables that point majob (CLI, ``open_store``) at ``server``; put
    the previous values back at the end. Yields the variables set."""
    env = {
        "MAJOB_OBS_ENDPOINT": server.endpoint,
        "HUAWEICLOUD_SDK_AK": DEFAULT_ACCESS_KEY,
        "HUAWEICLOUD_SDK_SK": DEFAULT_SECRET_KEY,
        "MAJOB_OBS_TIMEOUT": "10",
    }
    with _environ(env, unset=_OBS_VARIABLES_CLEARED):
        yield env


@contextmanager
def _environ(settings: Mapping[str, str], *, unset: tuple[str, ...]) -> Iterator[None]:
    """``settings`` set and ``unset`` removed from ``os.environ`` for the block, then put back."""
    saved = {name: os.environ.get(name) for name in (*settings, *unset)}
    try:
        for name in unset:
            os.environ.pop(name, None)
        os.environ.update(settings)
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


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


# What a host may have set that must not reach the emulated cloud: real keys, real endpoints,
# a chosen profile.
HOST_CLOUD_VARIABLES = (
    "HUAWEICLOUD_SDK_AK",
    "HUAWEICLOUD_SDK_SK",
    "HUAWEICLOUD_SDK_SECURITY_TOKEN",
    "MAJOB_OBS_ENDPOINT",
    "MAJOB_OBS_CREDENTIALS",
    "MAJOB_MODELARTS_ENDPOINT",
    "MAJOB_PROFILE",
)


@contextmanager
def emulator_environment(root: Path) -> Iterator[Path]:
    """Point ``--profile emulator`` at an emulator whose state is ``root/emulator`` (yielded),
    with config and cache dirs of its own under ``root`` and the host's cloud variables unset;
    the environment is restored afterwards."""
    state = root / "emulator"
    settings = {
        "MAJOB_EMULATOR_DIR": str(state),
        "MAJOB_CONFIG_DIR": str(root / "config"),
        "MAJOB_CACHE_DIR": str(root / "cache"),
        "MAJOB_MODELARTS_TIMEOUT": "10",
    }
    with _environ(settings, unset=HOST_CLOUD_VARIABLES):
        yield state


@contextmanager
def emulated_cloud_environment(
    root: Path, buckets: Sequence[str] = DEFAULT_BUCKETS
) -> Iterator[EmulatedCloud]:
    """Both fakes in threads of this process, with their state in ``root/emulator`` and the
    environment of ``emulator_environment(root)``: ``--profile emulator`` finds them."""
    with emulator_environment(root) as state, EmulatedCloud(state, buckets=buckets) as cloud:
        yield cloud


def wait_until(
    check: Callable[[], T],
    what: str | Callable[[], str],
    *,
    timeout: float = 60.0,
    interval: float = 0.05,
) -> T:
    """Call ``check`` every ``interval`` seconds until it returns something true, and return
    that. After ``timeout`` seconds (generous: a deadline catches a hang, it measures nothing),
    raise ``AssertionError`` saying what was awaited (``what``, or what it returns then)."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            awaited = what if isinstance(what, str) else what()
            raise AssertionError(f"timed out after {timeout:g}s waiting for {awaited}")
        time.sleep(interval)
    return value


__all__ = [
    "EmulatedCloud",
    "EmulatorEndpoints",
    "FAKE_BUCKET",
    "FAKE_CREDENTIALS",
    "FakeObsProcess",
    "HOST_CLOUD_VARIABLES",
    "emulated_cloud",
    "emulated_cloud_environment",
    "emulator_environment",
    "fake_obs_process",
    "fake_obs_server_running",
    "obs_config",
    "obs_environment",
    "obs_store_for",
    "wait_until",
]

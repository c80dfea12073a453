"""majob's pytest fixtures, over the context managers of ``majob.testing``.

pytest loads this module by itself when majob is installed (entry point ``pytest11``, named
``majob.pytest_plugin``; ``-p no:majob.pytest_plugin`` turns it off). Each fixture imports what
it needs when used, so the plugin costs a pytest run that does not use it nothing.

- ``fake_obs_server``: a fake OBS in the test process, with the bucket ``FAKE_BUCKET``;
- ``obs_store``: the real OBS backend (esdk-obs-python) pointed at it;
- ``obs_env``: the environment variables that point the CLI and ``open_store`` at it;
- ``emulated_cloud_servers``: the fake OBS and the fake ModelArts in the test process (an
  ``EmulatedCloud``: its servers take faults, its backends hold the state), found by
  ``--profile emulator`` (``MAJOB_EMULATOR_DIR`` points at their state; an empty config dir keeps
  the user's own profiles out);
- ``emulated_cloud_env``: where they listen and the keys to call them with.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from majob.emulator.cloud import EmulatedCloud
    from majob.emulator.obs import FakeObsServer
    from majob.emulator.statefile import EmulatorEndpoints
    from majob.storage.obs import ObsObjectStore


@pytest.fixture
def fake_obs_server() -> Iterator[FakeObsServer]:
    """A fake OBS in this process (in memory) with the bucket ``FAKE_BUCKET``."""
    from majob.testing import fake_obs_server_running

    with fake_obs_server_running() as server:
        yield server


@pytest.fixture
def obs_store(fake_obs_server: FakeObsServer) -> Iterator[ObsObjectStore]:
    """The real OBS backend talking to ``fake_obs_server``."""
    from majob.testing import obs_store_for

    with obs_store_for(fake_obs_server) as store:
        yield store


@pytest.fixture
def obs_env(fake_obs_server: FakeObsServer) -> Iterator[dict[str, str]]:
    """Environment variables that point majob (CLI, ``open_store``) at ``fake_obs_server``."""
    from majob.testing import obs_environment

    with obs_environment(fake_obs_server) as env:
        yield env


@pytest.fixture
def emulated_cloud_servers(tmp_path: Path) -> Iterator[EmulatedCloud]:
    """Both fakes in this process, found by ``--profile emulator``."""
    from majob.testing import emulated_cloud_environment

    with emulated_cloud_environment(tmp_path) as cloud:
        yield cloud


@pytest.fixture
def emulated_cloud_env(emulated_cloud_servers: EmulatedCloud) -> EmulatorEndpoints:
    """Where ``emulated_cloud_servers`` listen, and the identity to call them with."""
    return emulated_cloud_servers.endpoints

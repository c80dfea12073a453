"""End-to-end tests: real clients against the emulator over loopback.

``fake_obs_server``, ``obs_store``, ``obs_env`` and ``emulated_cloud_servers`` come from
``majob.pytest_plugin``; here, the short names the tests use for the emulated cloud (``cloud``:
both fakes, found by ``--profile emulator``), that profile and its OBS store. The fake
ModelArts's own tests (``emulator/``) use a ``cloud`` of their own, without the profile.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from majob.emulator.cloud import EmulatedCloud
from majob.service.connect import open_store
from majob.spec.profiles import Profile, load_profile
from majob.storage.obs import ObsObjectStore


@pytest.fixture
def cloud(emulated_cloud_servers: EmulatedCloud) -> EmulatedCloud:
    return emulated_cloud_servers


@pytest.fixture
def profile(cloud: EmulatedCloud) -> Profile:
    return load_profile("emulator")


@pytest.fixture
def store(profile: Profile) -> Iterator[ObsObjectStore]:
    opened = open_store(profile)
    try:
        yield opened
    finally:
        opened.close()

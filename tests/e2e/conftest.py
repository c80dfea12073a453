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

# Writes --write bytes to a file under --cache (each node its own /cache) and says where: the
# script of the /cache tests, locally (test_local_cache.py) and in the emulator.
CACHE_WRITER = """\
import argparse, os
p = argparse.ArgumentParser()
p.add_argument("--cache"); p.add_argument("--write", type=int)
a, _ = p.parse_known_args()
os.makedirs(a.cache, exist_ok=True)
with open(os.path.join(a.cache, "scratch.bin"), "wb") as out:
    out.write(b"x" * a.write)
print("node", os.environ["VC_TASK_INDEX"], "wrote to", a.cache, sorted(os.listdir(a.cache)), flush=True)
"""


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

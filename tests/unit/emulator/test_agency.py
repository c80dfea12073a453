"""The emulator's job agency: each job's temporary OBS credentials work while it runs (with
their security token only) and stop working once revoked."""

from __future__ import annotations

import pytest

from majob.emulator.modelarts.agency import ENV_NAMES, JobAgency
from majob.emulator.obs.server import FakeObsServer
from majob.errors import StorageAuthError
from majob.storage.config import Credentials
from majob.storage.obs import ObsObjectStore
from majob.testing import obs_config


def _store(server: FakeObsServer, granted: dict[str, str], token: str | None) -> ObsObjectStore:
    key, secret, _ = (granted[name] for name in ENV_NAMES)
    config = obs_config(server.endpoint).with_credentials(Credentials(key, secret, token))
    return ObsObjectStore(config)


def test_a_granted_key_works_with_its_token_until_revoked(fake_obs_server: FakeObsServer) -> None:
    agency = JobAgency(fake_obs_server.credentials, fake_obs_server.tokens)
    granted = agency.grant("job-1")
    assert agency.grant("job-1") == granted  # a restart of the job gets the same
    assert agency.grant("job-2") != granted
    with _store(fake_obs_server, granted, granted["OBS_SECURITY_TOKEN"]) as store:
        store.create_bucket("agency-b")
    with _store(fake_obs_server, granted, None) as store, pytest.raises(StorageAuthError):
        store.create_bucket("agency-c")  # no token: InvalidToken
    agency.revoke("job-1")
    with (
        _store(fake_obs_server, granted, granted["OBS_SECURITY_TOKEN"]) as store,
        pytest.raises(StorageAuthError),
    ):
        store.create_bucket("agency-d")


def test_a_fake_obs_without_signature_checks_gets_no_credentials() -> None:
    credentials: dict[str, str] = {}
    assert JobAgency(credentials, {}).grant("job-1") == {}
    assert credentials == {}  # adding one would turn the checks on

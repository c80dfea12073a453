"""The client's reading of a running emulator's state file: where it is, a clear error when no
daemon runs, and what the emulator publishes is what the client reads (the file is the whole
contract between the two sides)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from majob.emulator import statefile
from majob.emulator.cloud import EmulatedCloud
from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from majob.errors import ConfigError
from majob.processes import ProcessRef
from majob.spec.emulator_state import (
    STATE_FILE,
    emulator_state_dir,
    running_emulator,
)
from majob.spec.profiles import load_profile


def test_state_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAJOB_EMULATOR_DIR", str(tmp_path / "x"))
    assert emulator_state_dir() == tmp_path / "x"
    monkeypatch.delenv("MAJOB_EMULATOR_DIR")
    monkeypatch.chdir(tmp_path)
    assert emulator_state_dir() == tmp_path / ".majob" / "emulator"


def test_no_daemon_is_one_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError) as caught:
        running_emulator(tmp_path)
    assert "the emulator is not running" in caught.value.message
    assert caught.value.hint == "start it with `majob emulator start`"


def test_a_dead_daemon_is_not_running(tmp_path: Path) -> None:
    dead = 2**22 + 12345  # above the default pid_max: no such process
    state = {"obs": "http://127.0.0.1:1", "modelarts": "http://127.0.0.1:2", "pid": dead}
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    with pytest.raises(ConfigError, match="not running"):
        running_emulator(tmp_path)


def test_the_built_in_emulator_profile(tmp_path: Path) -> None:
    published = statefile.EmulatorEndpoints(
        obs="http://127.0.0.1:1", modelarts="http://127.0.0.1:2"
    )
    statefile.write_state(tmp_path, published, ProcessRef.current())
    env = {"MAJOB_EMULATOR_DIR": str(tmp_path), "MAJOB_CONFIG_DIR": str(tmp_path / "config")}
    profile = load_profile("emulator", env)
    assert profile.emulated and profile.bucket == "majob-demo"
    assert (profile.obs_endpoint, profile.modelarts_endpoint) == (
        published.obs,
        published.modelarts,
    )
    assert (profile.region, profile.project_id) == (published.region, published.project_id)


def test_the_client_reads_what_a_running_emulator_publishes(tmp_path: Path) -> None:
    with EmulatedCloud(tmp_path / "state", buckets=()) as cloud:
        found = running_emulator(tmp_path / "state")
        assert found.__dict__ == cloud.endpoints.to_dict()
    with pytest.raises(ConfigError, match="not running"):
        running_emulator(tmp_path / "state")  # stopped: the state file is gone


def test_the_emulator_keys_are_the_fake_obs_keys(tmp_path: Path) -> None:
    """The keys a client reads and signs with are the ones both fakes accept."""
    with EmulatedCloud(tmp_path, buckets=()) as cloud:
        found = running_emulator(tmp_path)
        assert (found.access_key, found.secret_key) == (DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY)
        assert cloud.obs.credentials == {DEFAULT_ACCESS_KEY: DEFAULT_SECRET_KEY}
        assert cloud.modelarts.credentials == {DEFAULT_ACCESS_KEY: DEFAULT_SECRET_KEY}


def test_a_state_without_a_field_says_which(tmp_path: Path) -> None:
    this = ProcessRef.current()
    state = {"obs": "http://127.0.0.1:1", "modelarts": "http://127.0.0.1:2", "pid": this.pid,
             "started": this.started}  # fmt: skip
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    with pytest.raises(ConfigError, match="lacks 'region'") as caught:
        running_emulator(tmp_path)
    assert caught.value.hint == "restart it: `majob emulator stop && majob emulator start`"

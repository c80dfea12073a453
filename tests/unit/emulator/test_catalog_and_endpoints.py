"""The catalogue covers the example specs; the endpoints module finds (or not) a daemon."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from majob.emulator.endpoints import (
    EMULATOR_ACCESS_KEY,
    EMULATOR_SECRET_KEY,
    STATE_FILE,
    emulator_state_dir,
    running_emulator,
)
from majob.emulator.obs.auth import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from majob.errors import ConfigError
from majob.processes import ProcessRef
from majob.service.catalog import ENGINES, FLAVORS, find_engine, find_flavor
from majob.spec.load import load_spec
from majob.spec.profiles import load_profile

ROOT = Path(__file__).resolve().parents[3]


@pytest.mark.parametrize("path", sorted((ROOT / "job_specs").glob("*.yaml")), ids=lambda p: p.name)
def test_the_example_specs_flavors_and_engines_are_in_the_catalogue(path: Path) -> None:
    spec = load_spec(path)
    flavor = find_flavor(spec.resources.flavor)
    assert flavor is not None and spec.resources.nodes <= flavor.max_num
    if spec.image.engine is not None:
        engine = find_engine(name=spec.image.engine, version=spec.image.version)
        assert engine is not None and engine.is_ascend == spec.is_ascend
        assert engine.is_ascend == (flavor.flavor_type == "Ascend")


def test_catalogue_entries_are_unique_and_consistent() -> None:
    assert len({f.flavor_id for f in FLAVORS}) == len(FLAVORS)
    assert len({e.engine_id for e in ENGINES}) == len(ENGINES)
    for flavor in FLAVORS:
        assert (flavor.flavor_type == "CPU") == (flavor.accelerators == 0)
        assert (flavor.npu > 0) == (flavor.flavor_type == "Ascend")
    for engine in ENGINES:
        assert find_engine(engine_id=engine.engine_id) is engine


def test_the_emulator_keys_are_the_fake_obs_keys() -> None:
    assert (EMULATOR_ACCESS_KEY, EMULATOR_SECRET_KEY) == (DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY)


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
    this = ProcessRef.current()
    state = {"obs": "http://127.0.0.1:1", "modelarts": "http://127.0.0.1:2", "pid": this.pid,
             "started": this.started}  # fmt: skip
    (tmp_path / STATE_FILE).write_text(json.dumps(state))
    env = {"MAJOB_EMULATOR_DIR": str(tmp_path), "MAJOB_CONFIG_DIR": str(tmp_path / "config")}
    profile = load_profile("emulator", env)
    assert profile.emulated and profile.bucket == "majob-demo"
    assert (profile.obs_endpoint, profile.modelarts_endpoint) == (state["obs"], state["modelarts"])

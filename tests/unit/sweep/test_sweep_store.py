"""What a sweep is started with survives in its study: ``resume`` needs nothing else."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.sweep import store


def test_the_sweep_info_and_its_sampler_come_back_from_the_file(tmp_path: Path) -> None:
    info = store.SweepInfo(
        id=store.new_sweep_id("tiny"),
        spec=str(tmp_path / "tiny.yaml"),
        name="tiny",
        stage="debug",
        trials=4,
        parallel=2,
        profile="emulator",
        goal="max",
        metric="accuracy",
        overrides=("hyperparameters.epochs=2", "description=again"),
    )
    path = store.sweeps_path(tmp_path / ".majob" / "ledger.db")
    assert path == tmp_path / ".majob" / "sweeps.journal"
    with store.opened(path) as storage:
        store.create_study(storage, info, seed=5, prune="median", startup=3, warmup=2)
    with store.opened(path) as storage:  # another process, later
        study = store.load_study(storage, info.id)
        assert store.SweepInfo.from_study(study) == info
        assert study.direction.name == "MAXIMIZE"
        assert study.pruner._n_startup_trials == 3 and study.pruner._n_warmup_steps == 2
        assert store.sweep_ids(storage) == [info.id]
        with pytest.raises(UserInputError, match=r"no sweep 'other-000000' here") as missing:
            store.load_study(storage, "other-000000")
        assert missing.value.hint == f"sweeps here: {info.id}"


def test_a_sweep_runs_in_one_process_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "sweeps.journal"
    with store.running(path, "tiny-abc123"):
        busy = pytest.raises(UserInputError, match="sweep tiny-abc123 is running in another")
        with busy, store.running(path, "tiny-abc123"):
            pass
        with store.running(path, "other-abc123"):  # another sweep is free to run
            pass
    with store.running(path, "tiny-abc123"):  # released
        pass

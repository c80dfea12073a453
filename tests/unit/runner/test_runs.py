"""Run directories: reading them, which ones a clean-up removes, retention after a run."""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable
from pathlib import Path

import pytest

from majob.errors import ConfigError, UserInputError
from majob.runner.local import run_local
from majob.runner.runs import (
    Retention,
    apply_retention,
    find_run,
    list_runs,
    select_old,
)
from majob.spec.models import JobSpec

MakeProject = Callable[..., JobSpec]
NOW = dt.datetime(2026, 6, 15, 12, 0, tzinfo=dt.timezone.utc)


def make_run(
    runs: Path, started: dt.datetime, *, name: str = "demo", status: str | None = "passed"
) -> Path:
    """A run directory as the runner leaves it (``status=None``: no record yet)."""
    run_id = f"{started.strftime('%Y%m%dT%H%M%SZ')}-{name}-{started.second:02x}{started.minute:04x}"
    path = runs / run_id
    (path / "logs").mkdir(parents=True)
    (path / "logs" / "worker-0.log").write_text("x" * 100)
    if status is not None:
        record = {
            "run_id": run_id,
            "spec_name": name,
            "stage": "local",
            "status": status,
            "started_at": started.isoformat(timespec="seconds"),
            "duration_seconds": 1.5,
        }
        (path / "record.json").write_text(json.dumps(record))
    return path


def test_runs_are_read_newest_first_and_other_dirs_are_ignored(tmp_path: Path) -> None:
    old = make_run(tmp_path, NOW - dt.timedelta(days=3))
    new = make_run(tmp_path, NOW - dt.timedelta(hours=1), status=None)
    (tmp_path / "not-a-run").mkdir()
    runs = list_runs(tmp_path)
    assert [r.path for r in runs] == [new, old]
    assert runs[0].status == "incomplete" and not runs[0].complete
    assert runs[1].status == "passed" and runs[1].duration == 1.5
    assert runs[1].size == 100 + (old / "record.json").stat().st_size
    assert list_runs(tmp_path / "absent") == []


def test_find_run_by_id_prefix_or_latest(tmp_path: Path) -> None:
    first = make_run(tmp_path, NOW - dt.timedelta(days=2))
    second = make_run(tmp_path, NOW - dt.timedelta(days=1))
    assert find_run(tmp_path, "latest").path == second
    assert find_run(tmp_path, first.name[:10]).path == first
    with pytest.raises(UserInputError, match="matches 2 runs"):
        find_run(tmp_path, "2026")
    with pytest.raises(UserInputError, match="no run 'nope'"):
        find_run(tmp_path, "nope")


def test_a_clean_up_keeps_the_newest_and_the_young(tmp_path: Path) -> None:
    ages = [1, 2, 30, 40, 50]  # hours
    for hours in ages:
        make_run(tmp_path, NOW - dt.timedelta(hours=hours))
    runs = list_runs(tmp_path)
    old = select_old(runs, keep=3, max_age=24 * 3600, now=NOW)
    assert [r.run_id for r in old] == [r.run_id for r in runs[3:]]  # 40 h and 50 h
    old = select_old(runs, keep=0, max_age=36 * 3600, now=NOW)
    assert [r.run_id for r in old] == [r.run_id for r in runs[3:]]
    assert select_old(runs, keep=0, max_age=None, now=NOW) == runs
    assert select_old(runs, keep=0, max_age=None, now=NOW, protect=[runs[0].run_id]) == runs[1:]


def test_a_run_without_a_record_gets_a_day_more(tmp_path: Path) -> None:
    going = make_run(tmp_path, NOW - dt.timedelta(hours=20), status=None)
    dead = make_run(tmp_path, NOW - dt.timedelta(hours=30), status=None)
    old = select_old(list_runs(tmp_path), keep=0, max_age=3600, now=NOW)
    assert [r.path for r in old] == [dead]
    assert going.exists()


def test_removing_a_run_never_follows_its_input_links(tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "precious.npz").write_text("keep me")
    runs = tmp_path / "runs"
    run = make_run(runs, NOW - dt.timedelta(days=400))
    (run / "inputs").mkdir()
    (run / "inputs" / "data_url_0").symlink_to(data, target_is_directory=True)
    removed = apply_retention(runs, Retention(keep=0, max_age=60))
    assert [r.path for r in removed] == [run]
    assert not run.exists()
    assert (data / "precious.npz").read_text() == "keep me"


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, Retention(20, 86400)),
        ({"MAJOB_RUNS_KEEP": "5", "MAJOB_RUNS_MAX_AGE": "7d"}, Retention(5, 7 * 86400)),
        ({"MAJOB_RUNS_KEEP": "ALL"}, None),
    ],
)
def test_retention_from_the_environment(env: dict[str, str], expected: Retention | None) -> None:
    assert Retention.from_env(env) == expected


@pytest.mark.parametrize(
    ("env", "message"),
    [
        ({"MAJOB_RUNS_KEEP": "many"}, "MAJOB_RUNS_KEEP='many': write a number of runs to keep"),
        ({"MAJOB_RUNS_MAX_AGE": "soon"}, "MAJOB_RUNS_MAX_AGE='soon': 'soon' is not a duration"),
    ],
)
def test_a_bad_retention_setting_is_a_config_error(env: dict[str, str], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        Retention.from_env(env)
    assert str(caught.value).startswith(message)


def test_each_run_applies_the_retention_policy(
    make_project: MakeProject, runs_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    stale = [make_run(runs_dir, NOW - dt.timedelta(days=d)) for d in (400, 401)]
    monkeypatch.setenv("MAJOB_RUNS_KEEP", "1")
    monkeypatch.setenv("MAJOB_RUNS_MAX_AGE", "1h")
    result = run_local(make_project("print('ok')\n"), runs_dir=runs_dir, on_line=lambda _: None)
    assert sorted(result.pruned) == sorted(p.name for p in stale)
    assert [r.run_id for r in list_runs(runs_dir)] == [result.run_id]

    monkeypatch.setenv("MAJOB_RUNS_KEEP", "all")
    kept = make_run(runs_dir, NOW - dt.timedelta(days=400))
    result = run_local(make_project("print('ok')\n"), runs_dir=runs_dir, on_line=lambda _: None)
    assert result.pruned == ()
    assert kept.exists()

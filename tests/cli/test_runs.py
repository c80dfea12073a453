"""``majob runs list|show|clean`` over run directories laid out as the runner leaves them."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.text import human_bytes

runner = CliRunner()
NOW = dt.datetime.now(dt.timezone.utc).replace(microsecond=0)


def make_run(runs: Path, age: dt.timedelta, *, suffix: str, status: str = "passed") -> str:
    started = NOW - age
    run_id = f"{started.strftime('%Y%m%dT%H%M%SZ')}-mnist-{suffix}"
    path = runs / run_id
    out = path / "ma-user/modelarts/outputs/train_url_0"
    out.mkdir(parents=True)
    (out / "model.pth").write_bytes(b"\0" * 2048)
    (path / "logs").mkdir()
    (path / "logs" / "worker-0.log").write_text("epoch 0\n")
    record = {
        "run_id": run_id,
        "spec_name": "mnist",
        "stage": "local",
        "status": status,
        "started_at": started.isoformat(),
        "duration_seconds": 3.25,
        "python": "/usr/bin/python3",
        "nodes": [{"name": "worker-0", "exit_code": 0, "argv": [], "log": "logs/worker-0.log"}],
        "outputs": [{"channel": "train_url", "path": "model.pth", "size": 2048}],
        "output_dirs": {"train_url": str(out)},
        "output_copies": [
            {
                "channel": "train_url",
                "target": "/data/out",
                "copied": [],
                "replaced": [],
                "kept": ["model.pth"],
            }
        ],
        "notices": ["custom image x is not used locally"],
        "guard": [],
    }
    (path / "record.json").write_text(json.dumps(record))
    return run_id


def size_of(path: Path) -> str:
    return human_bytes(sum(f.stat().st_size for f in path.rglob("*") if f.is_file()))


@pytest.fixture
def runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("COLUMNS", "200")
    for name in ("MAJOB_RUNS_KEEP", "MAJOB_RUNS_MAX_AGE"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path / ".majob" / "runs"


def test_list_shows_a_table_newest_first(runs: Path) -> None:
    old = make_run(runs, dt.timedelta(days=3), suffix="aaaaaa", status="failed")
    new = make_run(runs, dt.timedelta(minutes=5), suffix="bbbbbb")
    result = runner.invoke(app, ["runs", "list"])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["RUN", "ID", "SPEC", "STAGE", "RESULT", "STARTED", "TOOK", "SIZE"]
    assert lines[1].startswith(new) and lines[2].startswith(old)
    assert lines[1].split()[1:4] == ["mnist", "local", "passed"]
    assert lines[2].split()[3] == "failed"
    assert lines[1].split()[-3:] == ["3.2s", *size_of(runs / new).split()]
    assert lines[3] == f"2 runs, {size_of(runs)} in {runs}"


def test_list_without_runs_says_so(runs: Path) -> None:
    result = runner.invoke(app, ["runs", "list"])
    assert result.exit_code == 0
    assert result.stdout == f"no runs in {runs}\n"


def test_show_gives_the_record_and_the_paths(runs: Path) -> None:
    run_id = make_run(runs, dt.timedelta(hours=1), suffix="cccccc")
    result = runner.invoke(app, ["runs", "show", run_id[:20]])
    assert result.exit_code == 0, result.output
    out = result.stdout
    assert f"run:      {run_id}\n" in out
    assert "result:   passed\n" in out
    assert f"node:     worker-0: exit code 0, log {runs / run_id / 'logs/worker-0.log'}\n" in out
    model = runs / run_id / "ma-user/modelarts/outputs/train_url_0/model.pth"
    assert f"output:   train_url: {model} (kept the differing /data/out/model.pth)\n" in out
    assert "notice:   custom image x is not used locally\n" in out
    missing = runner.invoke(app, ["runs", "show", "nope"])
    assert missing.exit_code == 2
    assert missing.stderr.startswith("error: no run 'nope' in ")


def test_clean_removes_what_the_options_say(runs: Path) -> None:
    ids = [make_run(runs, dt.timedelta(days=days), suffix=f"{days:06x}") for days in (0, 2, 9, 10)]
    dry = runner.invoke(app, ["runs", "clean", "--keep", "1", "--older-than", "7d", "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert dry.stdout.splitlines()[:2] == [
        f"would remove {ids[2]} (passed, {size_of(runs / ids[2])})",
        f"would remove {ids[3]} (passed, {size_of(runs / ids[3])})",
    ]
    assert "would remove 2 runs (" in dry.stdout and f"); kept 2 in {runs}" in dry.stdout
    assert all((runs / i).is_dir() for i in ids)

    done = runner.invoke(app, ["runs", "clean", "--keep", "1", "--older-than", "7d"])
    assert done.exit_code == 0, done.output
    assert sorted(p.name for p in runs.iterdir()) == sorted(ids[:2])
    again = runner.invoke(app, ["runs", "clean"])  # default: newest 20 or younger than a day
    assert again.stdout == f"nothing to remove: 2 runs in {runs}, all kept\n"
    everything = runner.invoke(app, ["runs", "clean", "--all"])
    assert everything.exit_code == 0
    assert "removed 2 runs" in everything.stdout
    assert list(runs.iterdir()) == []


def test_clean_refuses_contradicting_options(runs: Path) -> None:
    result = runner.invoke(app, ["runs", "clean", "--all", "--keep", "3"])
    assert result.exit_code == 2
    assert result.stderr == "error: --all removes every run: leave out --keep and --older-than\n"

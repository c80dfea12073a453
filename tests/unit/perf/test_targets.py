"""``majob perf`` on a profile it must fetch or find: an obs:// path on the fake OBS (the real
client, over loopback), a local run id; and one message when nothing is there."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.storage.obs import ObsObjectStore
from majob.testing import FAKE_BUCKET

from .conftest import StepPlan, step_events, write_rank

runner = CliRunner()
PLAN = StepPlan(
    [
        ("enumerate(DataLoader)#_SingleProcessDataLoaderIter.__next__", 5000.0),
        ("aten::linear", 400.0),
        ("Optimizer.step#SGD.step", 100.0),
    ]
)


def _upload(store: ObsObjectStore, local: Path, prefix: str) -> None:
    for path in sorted(local.rglob("*")):
        if path.is_file():
            store.put_file(FAKE_BUCKET, prefix + path.relative_to(local).as_posix(), path)


@pytest.mark.slow
def test_an_obs_output_path_is_downloaded_and_its_profiling_read(
    tmp_path: Path,
    obs_env: dict[str, str],
    obs_store: ObsObjectStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    write_rank(tmp_path / "local", step_events([PLAN] * 4))
    (tmp_path / "local" / "model.pth").write_text("weights: not downloaded")
    _upload(obs_store, tmp_path / "local", "out/formal/")
    result = runner.invoke(
        app, ["perf", f"obs://{FAKE_BUCKET}/out/formal/", "--format", "json", "--no-msprof"]
    )
    assert result.exit_code == 1, result.output
    data = json.loads(result.output)
    assert data["findings"][0]["key"] == "data_wait"
    downloaded = [p.name for p in (tmp_path / ".majob" / "perf" / "downloads").rglob("*")]
    assert "trace_view.json" in downloaded and "model.pth" not in downloaded


@pytest.mark.slow
def test_an_obs_path_without_profiling_data(
    tmp_path: Path,
    obs_env: dict[str, str],
    obs_store: ObsObjectStore,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.chdir(tmp_path)
    obs_store.put_bytes(FAKE_BUCKET, "other/formal/model.pth", b"weights")
    for path in (f"obs://{FAKE_BUCKET}/nothing/", f"obs://{FAKE_BUCKET}/other/formal/"):
        result = runner.invoke(app, ["perf", path, "--no-msprof"])
        assert result.exit_code == 2, result.output
        assert "no profiling data there" in result.output
        assert "Traceback" not in result.output
    obs_store.put_bytes(FAKE_BUCKET, "weights-only/profiling/readme.txt", b"x")
    result = runner.invoke(app, ["perf", f"obs://{FAKE_BUCKET}/weights-only/", "--no-msprof"])
    assert result.exit_code == 2 and "no profiling data there" in result.output
    assert not list((tmp_path / ".majob" / "perf" / "downloads").rglob("model.pth"))


def test_a_local_run_id_reads_that_runs_directory(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    run = runs / "20261206T220000Z-mnist-abc123"
    write_rank(run / "ma-user" / "modelarts" / "outputs" / "train_url_0", step_events([PLAN] * 4))
    for target in ("20261206T220000Z-mnist-abc123", "2026", "latest"):
        result = runner.invoke(
            app, ["perf", target, "--runs-dir", str(runs), "--format", "json", "--no-msprof"]
        )
        assert result.exit_code == 1, result.output
        assert json.loads(result.output)["ranks"][0]["label"] == "worker-0-rank0"

"""The node bootstrap of ``--perf``, run for real: small torch scripts with no profiler code,
started with a ``sitecustomize`` that loads ``majob/perf/bootstrap.py`` as a run's does."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from majob.perf import bootstrap
from majob.spec.perf import Perf

SITE = """\
import importlib.util
spec = importlib.util.spec_from_file_location("_majob_perf_bootstrap", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.install()
"""
TRAIN = """\
import gc, os, signal, sys, time
import torch
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(10):
    model(torch.randn(4, 8)).sum().backward()
    if step == 7:
        gc.collect()  # the garbage collector runs in step 7: its time is in gc_ns
    optimizer.step()
    if step == 3 and sys.argv[1] == "raise":
        raise RuntimeError("the script fails at step 3")
    if step == 3 and sys.argv[1] == "sigterm":
        os.kill(os.getpid(), signal.SIGTERM)
        time.sleep(30)
"""
# No optimizer: the profile runs on time windows; it stops once the profile is written.
NO_OPTIMIZER = """\
import glob, sys, time
import torch
model = torch.nn.Linear(8, 2)
deadline = time.monotonic() + 60
with torch.no_grad():
    while time.monotonic() < deadline and not glob.glob(sys.argv[1] + "/*/profiler_info_0.json"):
        model(torch.randn(4, 8))
        time.sleep(0.005)
"""


def _run(
    tmp_path: Path, script: str, perf: dict[str, Any], *args: str
) -> subprocess.CompletedProcess[str]:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(SITE.format(path=bootstrap.__file__))
    config = {"mode": "profile", "profiling_dir": str(tmp_path / "profiling"), "perf": perf}
    (tmp_path / "perf.json").write_text(json.dumps(config))
    (tmp_path / "train.py").write_text(script)
    env = {**os.environ, "PYTHONPATH": str(site), "MAJOB_PERF": str(tmp_path / "perf.json")}
    env.update(VC_TASK_INDEX="2")
    return subprocess.run(
        [sys.executable, str(tmp_path / "train.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _folders(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "profiling").iterdir())


def _info(folder: Path, rank: int = 0) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((folder / f"profiler_info_{rank}.json").read_text())
    return data


def _trace_steps(folder: Path) -> list[str]:
    trace = json.loads((folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").read_text())
    return sorted(
        {e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")}
    )


@pytest.mark.parametrize(
    "perf",
    [
        {},
        {"skip_first": 1, "wait": 2, "warmup": 1, "active": 2, "repeat": 2},
        {"skip_first": 0, "warmup": 0, "active": 1, "repeat": 3, "wait": 1},
    ],
)
def test_the_bootstrap_and_the_spec_agree_on_the_profiled_steps(perf: dict[str, Any]) -> None:
    block = Perf.model_validate(perf)
    assert bootstrap.profiled_steps(block.model_dump()) == set(block.profiled_steps())


@pytest.mark.slow
def test_an_exception_stops_the_profile_and_marks_it_partial(tmp_path: Path) -> None:
    done = _run(tmp_path, TRAIN, Perf.model_validate({}).model_dump(), "raise", "--rank=1")
    assert done.returncode == 1 and "the script fails at step 3" in done.stderr
    (folder,) = _folders(tmp_path)
    assert folder.name.startswith("worker-2-rank1_") and folder.name.endswith("_ascend_pt")
    info = _info(folder, rank=1)
    assert (info["complete"], info["reason"], info["steps"]) == (False, "exception", [3, 4])
    assert (info["rank_id"], info["node"]) == (1, 2)
    assert _trace_steps(folder) == ["ProfilerStep#3", "ProfilerStep#4"]
    steps = (folder / "majob_steps_1.jsonl").read_text().splitlines()
    assert [json.loads(line)["step"] for line in steps] == [0, 1, 2, 3]


@pytest.mark.slow
def test_sigterm_stops_the_profile_and_the_process_still_dies_of_it(tmp_path: Path) -> None:
    done = _run(tmp_path, TRAIN, Perf.model_validate({}).model_dump(), "sigterm")
    assert done.returncode == -signal.SIGTERM, done.stderr
    (folder,) = _folders(tmp_path)
    info = _info(folder)
    assert (info["complete"], info["reason"], info["steps"]) == (False, "signal", [3, 4])
    assert _trace_steps(folder) == ["ProfilerStep#3", "ProfilerStep#4"]


@pytest.mark.slow
def test_a_script_without_an_optimizer_is_profiled_by_time_windows(tmp_path: Path) -> None:
    perf = Perf.model_validate({"window_seconds": 0.05, "skip_first": 1, "active": 2}).model_dump()
    done = _run(tmp_path, NO_OPTIMIZER, perf, str(tmp_path / "profiling"))
    assert done.returncode == 0, done.stderr
    (folder,) = _folders(tmp_path)
    info = _info(folder)
    assert (info["complete"], info["reason"], info["steps"]) == (True, "window", [2, 3])
    assert _trace_steps(folder) == ["ProfilerStep#2", "ProfilerStep#3"]
    assert not list(folder.glob("majob_steps_*.jsonl"))  # no optimizer step, no step line


@pytest.mark.slow
def test_each_repeated_cycle_gets_its_own_folder_and_the_steps_stay_in_the_first(
    tmp_path: Path,
) -> None:
    perf = Perf.model_validate({"skip_first": 1, "warmup": 0, "active": 2, "repeat": 2, "wait": 1})
    done = _run(tmp_path, TRAIN, perf.model_dump(), "run")
    assert done.returncode == 0, done.stderr
    first, second = _folders(tmp_path)
    assert [_info(f)["steps"] for f in (first, second)] == [[2, 3], [5, 6]]
    assert all(_info(f)["complete"] for f in (first, second))
    assert _trace_steps(second) == ["ProfilerStep#5", "ProfilerStep#6"]
    lines = [json.loads(line) for line in (first / "majob_steps_0.jsonl").read_text().splitlines()]
    assert [line["step"] for line in lines if line["profiled"]] == [2, 3, 5, 6]
    assert len(lines) == 10 and not list(second.glob("majob_steps_*"))
    assert lines[7]["gc_ns"] > 0

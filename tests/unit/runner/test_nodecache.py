"""Each node's /cache in the local stage: a folder of its own that paths on /cache map to, a
capacity (``--cache-size``, else the flavor's disk in the catalogue) and the watch that fails a
run past it with the emulator's eviction text."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from majob.container import cache_full
from majob.errors import RunnerError
from majob.runner.cachelimit import cache_capacity, cache_watch
from majob.runner.layout import container_paths, node_env, script_args
from majob.runner.local import run_local
from majob.runner.nodecache import CacheWatch, node_cache_dir, overflow
from majob.spec.models import JobSpec

MakeProject = Callable[..., JobSpec]
ROOT = Path("/runs/r1/ma-user")


def _spec(**changes: Any) -> JobSpec:
    data: dict[str, Any] = {
        "name": "job",
        "code": {"dir": "/src/project", "boot_file": "train.py"},
        "image": {"engine": "PyTorch", "version": "pytorch_1.8.0"},
        "resources": {"flavor": "modelarts.vm.cpu.8u", "nodes": 2},
        "env": {"SCRATCH": "/cache/tmp", "OTHER": "/cachet/x"},
        "hyperparameters": {"scratch": "/cache", "name": "/cache-not"},
    }
    data.update(changes)
    return JobSpec.model_validate(data)


def test_each_node_gets_a_cache_folder_beside_the_tree() -> None:
    paths = container_paths(_spec(), ROOT)
    assert paths.caches == (Path("/runs/r1/cache/worker-0"), Path("/runs/r1/cache/worker-1"))
    assert paths.caches[1] == node_cache_dir(ROOT.parent, 1)  # where the emulator puts it too


def test_paths_on_cache_become_the_nodes_folder_and_nothing_else_does() -> None:
    spec = _spec()
    paths = container_paths(spec, ROOT)
    env = node_env(spec, paths, node=1, nodes=2, run_id="r1")
    assert env["SCRATCH"] == "/runs/r1/cache/worker-1/tmp"
    assert env["OTHER"] == "/cachet/x"
    args = script_args(spec, paths, node=0, nodes=2, master_port=1)
    assert "--scratch=/runs/r1/cache/worker-0" in args
    assert "--name=/cache-not" in args


def test_the_capacity_is_the_option_else_the_flavors_disk_else_none_said_once() -> None:
    assert cache_capacity(_spec(), None) == (100 * 10**9, ())  # modelarts.vm.cpu.8u: 100 GB
    assert cache_capacity(_spec(), 4096) == (4096, ())
    gpu = _spec(resources={"flavor": "modelarts.vm.gpu.p100"})  # the catalogue lists no disk
    capacity, notices = cache_capacity(gpu, None)
    assert capacity is None and len(notices) == 1
    assert "/cache is not limited" in notices[0] and "modelarts.vm.gpu.p100" in notices[0]
    assert "--cache-size" in notices[0]


def test_the_watch_counts_the_inputs_on_every_node_and_names_the_first_full_one(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "a.bin").write_bytes(b"x" * 600)
    single = tmp_path / "one.bin"
    single.write_bytes(b"x" * 400)
    spec = _spec()
    paths = container_paths(spec, tmp_path / "run" / "ma-user")
    for folder in paths.caches:
        folder.mkdir(parents=True)
    watch = cache_watch(spec, paths, 1500, [data, single])
    assert watch is not None and watch.full(now=True) is None  # 1000 B of inputs on each
    (paths.caches[1] / "scratch.bin").write_bytes(b"x" * 501)
    text = watch.full(now=True)
    assert text == cache_full(1, 1501, 1500, "modelarts.vm.cpu.8u")
    assert text.startswith("worker-1: the node's local disk is full") and "evicted" in text
    assert cache_watch(spec, paths, None, [data]) is None


def test_the_watch_measures_once_a_period_unless_asked_now(tmp_path: Path) -> None:
    folder = tmp_path / "cache"
    folder.mkdir()
    asked: list[int] = []

    def inputs() -> int:
        asked.append(1)
        return 0

    watch = CacheWatch(10, "f", [folder], inputs, period=3600)
    assert watch.full() is None
    (folder / "big").write_bytes(b"x" * 11)
    assert watch.full() is None  # the period has not gone by
    assert watch.full(now=True) == overflow(0, [folder], 10, "f") is not None
    assert asked == [1]  # the inputs are measured at the first look only


WRITER = """
import argparse, os
p = argparse.ArgumentParser(); p.add_argument("--scratch"); p.add_argument("--write", type=int)
a, _ = p.parse_known_args()
assert a.scratch == os.environ["SCRATCH"]
os.makedirs(a.scratch, exist_ok=True)
open(os.path.join(a.scratch, "scratch.bin"), "wb").write(b"x" * a.write)
print("node", os.environ["VC_TASK_INDEX"], "wrote to", a.scratch)
"""


def test_each_node_of_a_run_writes_into_its_own_cache(
    make_project: MakeProject, runs_dir: Path
) -> None:
    hyper = {"scratch": "/cache/tmp", "write": 10}
    spec = make_project(WRITER, hyperparameters=hyper, env={"SCRATCH": "/cache/tmp"})
    lines: list[str] = []
    result = run_local(spec, nodes=2, runs_dir=runs_dir, on_line=lines.append, cache_size=1000)
    assert result.ok
    for node in (0, 1):
        folder = result.run_dir / "cache" / f"worker-{node}" / "tmp"
        assert f"node {node} wrote to {folder}" in "\n".join(lines)
        assert (folder / "scratch.bin").stat().st_size == 10
    assert not result.findings  # /cache is writable scratch space, no guard finding


def test_a_run_past_its_cache_fails_with_the_eviction_text_and_a_record(
    make_project: MakeProject, runs_dir: Path
) -> None:
    hyper = {"scratch": "/cache/tmp", "write": 5000}
    spec = make_project(WRITER, hyperparameters=hyper, env={"SCRATCH": "/cache/tmp"})
    with pytest.raises(RunnerError) as caught:
        run_local(spec, runs_dir=runs_dir, on_line=lambda line: None, cache_size=2000)
    # 5000 bytes written and the 6-byte input: the emulator's text, word for word
    assert caught.value.message == cache_full(0, 5006, 2000, "modelarts.vm.cpu.8u")
    (run,) = runs_dir.iterdir()
    record = (run / "record.json").read_text()
    assert '"status": "failed"' in record and "local disk is full" in record

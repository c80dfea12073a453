"""``majob check`` on several processes: the same reports, in the same order, as on one."""

from __future__ import annotations

import gc
import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.migrate import rewrite, workers
from majob.migrate.checker import check_paths
from majob.migrate.rules import Codemod, Target

CORPUS = Path(__file__).resolve().parents[2] / "migrate_corpus"
MAJOB = Path(sys.executable).parent / "majob"


def _tree(tmp_path: Path) -> Path:
    """The migration corpus plus a broken and a non-UTF-8 file, in nested folders."""
    root = tmp_path / "tree"
    shutil.copytree(CORPUS, root / "corpus")
    (root / "broken").mkdir()
    (root / "broken" / "bad_syntax.py").write_text("def f(:\n", encoding="utf-8")
    (root / "broken" / "latin1.py").write_bytes("x = 'caf\xe9'\n".encode("latin-1"))
    return root


def test_several_workers_give_the_reports_of_one(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    one = check_paths([root], Target.NPU, (2, 1), jobs=1)
    several = check_paths([root], Target.NPU, (2, 1), jobs=3)
    assert [r.path for r in several] == [r.path for r in one]
    assert [r.findings for r in several] == [r.findings for r in one]
    assert [r.fixes for r in several] == [r.fixes for r in one]
    assert sum(not r.parsed for r in one) == 3  # the two broken files and py2_era.py
    assert sum(len(r.findings) for r in one) > 50


def test_the_cli_output_is_the_same_with_and_without_workers(tmp_path: Path) -> None:
    # A real process: the CLI has one thread, so its workers are forked, as users get them.
    root = _tree(tmp_path)
    outputs = []
    for jobs in ("1", "2"):
        done = subprocess.run(
            [str(MAJOB), "check", str(root), "--target", "npu", "--format", "json", "-j", jobs],
            capture_output=True,
            text=True,
            check=False,
        )
        assert done.returncode == 1, done.stderr  # the corpus has errors
        outputs.append(done.stdout)
    assert outputs[0] == outputs[1]
    document = json.loads(outputs[0])
    assert len(document["files"]) == len(list(root.rglob("*.py")))


def test_a_small_tree_is_checked_in_one_process(tmp_path: Path) -> None:
    files = [tmp_path / f"f{i}.py" for i in range(20)]
    for path in files:
        path.write_text("import torch\n", encoding="utf-8")
    assert workers.worker_count(None, workers.file_sizes(files)) == 1


def test_a_large_tree_uses_every_cpu_when_a_fork_is_safe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = "x = 1\n" * (workers.MIN_BYTES_PER_WORKER // 6 + 1)
    files = [tmp_path / f"f{i}.py" for i in range(8)]
    for path in files:
        path.write_text(big, encoding="utf-8")
    monkeypatch.setattr(workers, "available_cpus", lambda: 4)
    monkeypatch.setattr(workers, "_fork_is_safe", lambda: True)
    assert workers.worker_count(None, workers.file_sizes(files)) == 4
    # no more workers than files
    assert workers.worker_count(None, workers.file_sizes(files[:2])) == 2
    monkeypatch.setattr(workers, "_fork_is_safe", lambda: False)
    assert workers.worker_count(None, workers.file_sizes(files)) == 1


def test_a_process_with_other_threads_does_not_fork_on_its_own() -> None:
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert not workers._fork_is_safe()
    finally:
        stop.set()
        thread.join()


def test_jobs_asked_for_are_given_up_to_the_number_of_files() -> None:
    assert workers.worker_count(8, [10, 20]) == 2
    assert workers.worker_count(1, [10, 20]) == 1


def test_jobs_below_one_is_refused() -> None:
    result = CliRunner().invoke(app, ["check", str(CORPUS), "-j", "0"])
    assert result.exit_code == 2
    assert "-j" in result.output or "--jobs" in result.output


def test_workers_are_spawned_where_a_fork_is_unsafe(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    stop = threading.Event()
    thread = threading.Thread(target=stop.wait)
    thread.start()
    try:
        assert workers._context().get_start_method() == "spawn"
        several = check_paths([root], Target.GPU, jobs=2)
    finally:
        stop.set()
        thread.join()
    one = check_paths([root], Target.GPU, jobs=1)
    assert [r.findings for r in several] == [r.findings for r in one]


def test_a_migration_planned_on_workers_is_the_one_planned_in_one(tmp_path: Path) -> None:
    root = _tree(tmp_path)
    for codemod in (Codemod.CLOUD_PATHS, Codemod.DDP, Codemod.NPU_MANUAL):
        one = rewrite.plan([root], codemod, jobs=1)
        several = rewrite.plan([root], codemod, jobs=2)
        assert [(c.display, c.after, c.fixes) for c in several.changes] == [
            (c.display, c.after, c.fixes) for c in one.changes
        ]
        assert several.skipped == one.skipped
        assert len(one.skipped) == 2 and one.changes


def test_a_check_leaves_no_garbage_per_file(tmp_path: Path) -> None:
    # The pass runs with the cycle collector paused: whatever a file leaves in cycles would pile
    # up until the end, so a tree twice as large must leave no more of it.
    small, large = tmp_path / "small", tmp_path / "large"
    for copies, root in ((1, small), (2, large)):
        for copy in range(copies):
            shutil.copytree(CORPUS, root / f"copy{copy}")
    unreachable = []
    for root in (small, large):
        gc.collect()
        gc.disable()
        try:
            check_paths([root], Target.NPU, jobs=1)
            rewrite.plan([root], Codemod.DDP, jobs=1)
        finally:
            unreachable.append(gc.collect())
            gc.enable()
    assert unreachable[1] <= unreachable[0] + 5


@pytest.mark.skipif(sys.platform != "linux", reason="the work is dealt from a pipe on Linux only")
@pytest.mark.parametrize("count", [1, 8, 70_000])
def test_the_tasks_are_dealt_heaviest_first_and_every_item_once(count: int) -> None:
    weights = [(i * 7919) % 1000 for i in range(count)]
    tasks, dealt = workers._deal(weights)
    try:
        taken = list(workers._taken(tasks, dealt))
    finally:
        os.close(dealt)
    assert sorted(taken) == list(range(count))  # each item once, the pipe read to its end
    assert [weights[i] for i in taken] == sorted(weights, reverse=True)
    # more tasks than a pipe holds numbers for (64 KiB, 4 bytes each): a few items to a task
    assert len(tasks) == count if count < 16_384 else 1 < len(tasks[0]) <= 8


# Run in a fresh interpreter: the test session may have other threads by now (servers of other
# tests), and then majob rightly spawns instead of forking.
FORKED_MAP = """
import os, signal, sys, tempfile, time
from pathlib import Path
from majob.migrate import workers

MAIN = os.getpid()
TAKEN = ""  # a fresh directory per map: a forked worker marks it when it takes an item
FAIL = None  # None: square every item; "raise" or "kill": a worker fails on any item but 1

def square_or_fail(value):
    if os.getpid() == MAIN:
        # This process holds each item until a forked worker has taken one (the one it fails on,
        # when it fails), so the workers get items however slow or loaded the machine is and
        # whichever process the fork schedules first (a fixed sleep raced with forks, and so
        # did counting on this process taking the first item).
        deadline = time.monotonic() + 120
        while not os.listdir(TAKEN) and time.monotonic() < deadline:
            time.sleep(0.01)
        return value * value
    if FAIL is None or value == 1:
        if FAIL is None:
            open(os.path.join(TAKEN, str(os.getpid())), "w").close()
        return value * value
    open(os.path.join(TAKEN, str(os.getpid())), "w").close()
    if FAIL == "kill":
        os.kill(os.getpid(), signal.SIGKILL)  # a worker killed (out of memory) mid-task
    raise ValueError(f"{value} is unlucky")

def children():
    tasks = Path("/proc/self/task").iterdir()
    return {pid for task in tasks for pid in (task / "children").read_text().split()}

assert workers._fork_is_safe()
values = list(range(40))
TAKEN = tempfile.mkdtemp()
assert workers.map_in_workers(square_or_fail, values, 3, weights=values) == [v * v for v in values]
TAKEN, FAIL = tempfile.mkdtemp(), "raise"
try:  # whichever process takes 1 (the heaviest), a worker takes 13 or 14 and raises
    workers.map_in_workers(square_or_fail, [13, 1, 14], 2, weights=[1, 100, 1])
except ValueError as error:
    assert "unlucky" in str(error) and "in a check worker" in str(error.__cause__), error
else:
    raise AssertionError("the worker's error was lost")
TAKEN, FAIL = tempfile.mkdtemp(), "kill"
try:
    workers.map_in_workers(square_or_fail, [1, 99, 98, 97], 2, weights=[100, 1, 1, 1])
except workers.WorkerFailed as error:
    assert "signal 9" in str(error), error
else:
    raise AssertionError("a killed worker went unnoticed")
assert children() == set(), children()  # every worker was waited for, none left running
print("ok")
"""


@pytest.mark.skipif(sys.platform != "linux", reason="workers are forked on Linux only")
def test_forked_workers_keep_order_and_pass_errors_back() -> None:
    done = subprocess.run(
        [sys.executable, "-c", FORKED_MAP], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0 and done.stdout == "ok\n", done.stderr

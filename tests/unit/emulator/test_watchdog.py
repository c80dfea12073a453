"""The executor's watchdog: when a quiet node is hung, and when it is only slow."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from majob.emulator.modelarts import watchdog as watchdog_module
from majob.emulator.modelarts.jobfaults import JobFault
from majob.emulator.modelarts.restarts import JOB_HANGED
from majob.emulator.modelarts.usage import Sample
from majob.emulator.modelarts.watchdog import Watchdog
from majob.testing import wait_until


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def monotonic(self) -> float:
        return self.now


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> Clock:
    made = Clock()
    monkeypatch.setattr(watchdog_module, "time", SimpleNamespace(monotonic=made.monotonic))
    return made


@pytest.fixture
def node() -> Iterator[int]:
    """A real process group to signal (the injected hang freezes it)."""
    process = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(60)"], start_new_session=True
    )
    yield process.pid
    process.kill()
    process.wait()


def _quiet_node(monkeypatch: pytest.MonkeyPatch, *, busy: bool) -> None:
    """Every node's processes used no CPU at all; ``busy``: one of them is runnable (or in
    a disk wait) all the same, as a process starved of CPU on a loaded machine is."""
    monkeypatch.setattr(
        watchdog_module, "group_sample", lambda leader, at: Sample(at, 1.0, 0, busy)
    )


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


def _logs(tmp_path: Path, count: int) -> list[Path]:
    logs = [tmp_path / f"worker-{i}.log" for i in range(count)]
    for log in logs:
        log.write_text("started\n")
    return logs


def _watch_for(watchdog: Watchdog, clock: Clock, seconds: float) -> list[str]:
    hung = []
    for _ in range(int(seconds / 0.05)):
        clock.now += 0.05
        fault = watchdog.check()
        if fault is not None:
            hung.append(fault.task)
            watchdog.warned.add(int(fault.task.rsplit("-", 1)[1]))
    return hung


def test_a_quiet_node_without_cpu_use_is_hung(
    clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _quiet_node(monkeypatch, busy=False)
    watchdog = Watchdog(_logs(tmp_path, 1), [1], fault=None, hang_window=2.0)
    assert _watch_for(watchdog, clock, 1.9) == []
    assert _watch_for(watchdog, clock, 0.2) == ["worker-0"]


def test_a_node_starved_of_cpu_is_not_taken_for_hung(
    clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A runnable process that a loaded machine gives no CPU prints nothing and uses no CPU:
    by those two measures it is hung, yet it is only waiting for its turn."""
    _quiet_node(monkeypatch, busy=True)
    watchdog = Watchdog(_logs(tmp_path, 1), [1], fault=None, hang_window=2.0)
    assert _watch_for(watchdog, clock, 10.0) == []


def test_an_injected_hangs_short_window_is_only_for_the_node_it_froze(
    clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, node: int
) -> None:
    """Before the fault strikes, and on the other nodes, the job's window holds: a slow node is
    not hung after the injection's short window (it was, on a loaded machine)."""
    _quiet_node(monkeypatch, busy=False)
    logs = _logs(tmp_path, 2)
    fault = JobFault(node_fault="hangs", node=1, at_step=1, hang_window=0.4)
    watchdog = Watchdog(logs, [node, node], fault=fault, hang_window=600.0)
    assert _watch_for(watchdog, clock, 5.0) == []  # quiet, but not frozen
    with logs[1].open("a") as log:
        log.write("step 1\n")
    assert _watch_for(watchdog, clock, 0.2) == []
    assert watchdog.struck is not None and watchdog.struck.scenario == JOB_HANGED
    wait_until(lambda: _state(node) == "T", "worker-1 frozen (SIGSTOP)")
    assert _watch_for(watchdog, clock, 0.4) == ["worker-1"]
    assert _watch_for(watchdog, clock, 5.0) == []  # worker-0 keeps the job's window


def test_a_quiet_node_busy_computing_is_looked_at_twice_a_window(
    clock: Clock, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node that prints nothing while it computes is not hung, and its processes are read
    from /proc at the window's end (and halfway through the first), not at every tick."""
    looks: list[float] = []

    def computing(leader: int, at: float) -> Sample:
        looks.append(at)
        return Sample(at, float(len(looks)), 0, False)  # a second of CPU between two looks

    monkeypatch.setattr(watchdog_module, "group_sample", computing)
    watchdog = Watchdog(_logs(tmp_path, 1), [1], fault=None, hang_window=2.0)
    assert _watch_for(watchdog, clock, 10.0) == []
    assert 4 <= len(looks) <= 6  # about one per 2 s window, against ~100 ticks past halfway

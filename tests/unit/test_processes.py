"""``majob.processes``: a recorded process is ours only while its pid and start time match."""

from __future__ import annotations

import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from majob.processes import ProcessRef, signal_if_ours, start_time
from majob.testing import wait_until


@pytest.fixture
def child() -> Iterator[subprocess.Popen[bytes]]:
    process = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    yield process
    process.kill()
    process.wait()


def test_a_live_process_is_itself_until_it_is_gone(child: subprocess.Popen[bytes]) -> None:
    recorded = ProcessRef.of(child.pid)
    assert recorded.started and recorded.is_running()
    child.kill()
    child.wait()  # reaped: the pid is free for anyone
    assert not recorded.is_running()


def test_another_start_time_or_none_is_not_ours(child: subprocess.Popen[bytes]) -> None:
    assert not ProcessRef(child.pid, "another start").is_running()
    assert not ProcessRef(child.pid).is_running()  # an old record: unverifiable
    assert not signal_if_ours(ProcessRef(child.pid, "another start"), signal.SIGKILL)
    assert child.poll() is None
    assert signal_if_ours(ProcessRef.of(child.pid), signal.SIGKILL)
    assert child.wait() == -signal.SIGKILL


def test_the_proc_stat_line_is_read_past_a_command_name_with_spaces(tmp_path: Path) -> None:
    # Field 2 is the command name in parentheses; it may hold ") (" itself.
    rest = " ".join(["S"] + [str(n) for n in range(4, 22)] + ["987654", "0", "0"])
    (tmp_path / "42").mkdir()
    (tmp_path / "42" / "stat").write_text(f"42 (evil) (name) {rest}\n")
    (tmp_path / "sys" / "kernel" / "random").mkdir(parents=True)
    (tmp_path / "sys" / "kernel" / "random" / "boot_id").write_text("boot-1\n")
    assert start_time(42, proc=tmp_path) == "boot-1:987654"
    assert start_time(43, proc=tmp_path) is None


def test_without_proc_the_start_time_comes_from_ps(
    tmp_path: Path, child: subprocess.Popen[bytes]
) -> None:
    no_proc = tmp_path / "no-proc"
    token = start_time(child.pid, proc=no_proc)
    assert token and token == start_time(child.pid, proc=no_proc)
    child.kill()
    child.wait()
    assert start_time(child.pid, proc=no_proc) is None


def test_a_pid_file_round_trips_and_a_bare_pid_has_no_start_time() -> None:
    recorded = ProcessRef(123, "boot:456")
    assert ProcessRef.from_text(recorded.to_text()) == recorded
    assert ProcessRef.from_text("123\n") == ProcessRef(123)
    assert ProcessRef.from_text("not a pid\n") is None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_a_killed_process_its_parent_has_not_reaped_is_not_running(
    child: subprocess.Popen[bytes],
) -> None:
    recorded = ProcessRef.of(child.pid)
    child.send_signal(signal.SIGKILL)  # not waited for: a zombie until the fixture reaps it
    stat = Path(f"/proc/{child.pid}/stat")
    wait_until(
        lambda: stat.read_text().rpartition(")")[2].split()[0] == "Z",
        "the killed child to be a zombie",
    )
    assert start_time(child.pid) is None
    assert not recorded.is_running()

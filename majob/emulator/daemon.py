"""``majob emulator start|stop|status``: both fakes as one background process on 127.0.0.1.

``start`` spawns ``majob emulator start --foreground`` in its own session (its output goes to
``<state dir>/emulator.log``) and returns once both fakes answer; it is idempotent, also when
two run at once: the daemon holds the state dir's lock for its life (``statedir.py``), so the
second daemon gives up and its ``start`` reports the first. The foreground process is an
``EmulatedCloud`` over the state dir; it writes ``emulator.pid`` and ``state.json`` (endpoints,
pid and start time) and on SIGTERM stops the running jobs (they end ``Abnormal``), both servers,
and removes both files. ``stop`` sends SIGTERM and waits for the process to go, and signals
only the process that wrote those files: a stale file may name a pid someone else has by now.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from majob.emulator import statedir, statefile
from majob.emulator.defaults import DEFAULT_REQUEST_TIMEOUT
from majob.emulator.statefile import EmulatorEndpoints
from majob.errors import ConfigError, MajobError
from majob.processes import ProcessRef, pid_alive, signal_if_ours

LOG_FILE = "emulator.log"
START_TIMEOUT = 30.0
STOP_TIMEOUT = 60.0  # running jobs get their SIGTERM grace period first


@dataclass(frozen=True)
class Started:
    endpoints: EmulatorEndpoints
    pid: int
    already_running: bool


def _answers(endpoint: str) -> bool:
    """The fake answers its control plane (no credentials needed there)."""
    try:
        with urllib.request.urlopen(f"{endpoint}/_majob/faults", timeout=2) as answer:
            return bool(answer.status == 200)
    except (OSError, urllib.error.URLError):
        return False


def _running(state_dir: Path) -> tuple[EmulatorEndpoints, int] | None:
    found = statefile.running(state_dir)
    return (found[0], found[1].pid) if found is not None else None


def start(
    state_dir: Path,
    *,
    buckets: Sequence[str],
    obs_port: int = 0,
    modelarts_port: int = 0,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> Started:
    """Start the daemon unless one already runs over ``state_dir``; wait until both fakes
    answer."""
    found = _running(state_dir)
    if found is not None:
        return Started(found[0], found[1], already_running=True)
    try:
        statedir.make_private_dir(state_dir)
    except OSError as error:
        raise ConfigError(
            f"cannot use {state_dir} as the emulator's state dir: {error.strerror}",
            hint="pass --state-dir (or set MAJOB_EMULATOR_DIR) to a writable directory",
        ) from None
    command = [sys.executable, "-m", "majob", "emulator", "start", "--foreground",
               "--state-dir", str(state_dir), "--obs-port", str(obs_port),
               "--modelarts-port", str(modelarts_port),
               "--request-timeout", repr(request_timeout)]  # fmt: skip
    for name in buckets:
        command += ["--bucket", name]
    log_path = state_dir / LOG_FILE
    pid = _spawn(command, log_path)
    child_exited = False  # once reaped, its pid is no longer ours to signal
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        found = _running(state_dir)
        # Ours, or (when ours gave way to it) the daemon another start began at the same time.
        if found is not None and (found[1] == pid or child_exited):
            endpoints = found[0]
            if _answers(endpoints.obs) and _answers(endpoints.modelarts):
                return Started(endpoints, found[1], already_running=found[1] != pid)
        if not child_exited:
            code = _exit_code(pid)
            if code is not None:
                child_exited = True
                if not statedir.held_elsewhere(state_dir):
                    tail = log_path.read_text(encoding="utf-8", errors="replace")
                    last = tail.strip().splitlines()[-3:]
                    raise MajobError(
                        f"the emulator exited with code {code} while starting: "
                        + (" | ".join(last) or "no output"),
                        hint=f"see {log_path}",
                    )
        time.sleep(0.05)
    if not child_exited:
        os.kill(pid, signal.SIGTERM)  # our child, not reaped: the pid is still its
    raise MajobError(
        f"the emulator did not answer within {START_TIMEOUT:.0f}s", hint=f"see {log_path}"
    )


def _spawn(command: list[str], log_path: Path) -> int:
    """Start the daemon in a session of its own (it outlives this command and its terminal's
    Ctrl-C), output appended to ``log_path``. No ``Popen`` object: nothing here waits for it."""
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, statedir.PRIVATE_FILE)
    try:
        return os.posix_spawn(
            command[0],
            command,
            {**os.environ, "PYTHONUNBUFFERED": "1"},
            file_actions=[
                (os.POSIX_SPAWN_OPEN, 0, os.devnull, os.O_RDONLY, 0),
                (os.POSIX_SPAWN_DUP2, log, 1),
                (os.POSIX_SPAWN_DUP2, log, 2),
            ],
            setsid=True,
        )
    finally:
        os.close(log)


def _exit_code(pid: int) -> int | None:
    """The exit code of our child ``pid`` once it ended (reaping it), else None."""
    try:
        done, status = os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        return None if pid_alive(pid) else 1
    return os.waitstatus_to_exitcode(status) if done else None


def stop(state_dir: Path) -> int | None:
    """Stop the daemon over ``state_dir``; its pid, or None when none was running."""
    daemon = _recorded_daemon(state_dir)
    if daemon is None or not daemon.is_running():
        _clear_stale_records(state_dir)
        return None
    signal_if_ours(daemon, signal.SIGTERM)
    deadline = time.monotonic() + STOP_TIMEOUT
    while daemon.is_running() and time.monotonic() < deadline:
        _reap(daemon.pid)
        time.sleep(0.05)
    if signal_if_ours(daemon, signal.SIGKILL):
        _clear_stale_records(state_dir)
    return daemon.pid


def _recorded_daemon(state_dir: Path) -> ProcessRef | None:
    """The daemon the state file names, else the one the pid file names (it is written
    first)."""
    daemon = statefile.publisher(state_dir)
    return daemon if daemon is not None else statedir.recorded_holder(state_dir)


def _clear_stale_records(state_dir: Path) -> None:
    """Remove the files a dead daemon left, unless a live one holds the state dir."""
    if statedir.held_elsewhere(state_dir):
        return
    statefile.remove_state(state_dir)
    (state_dir / statedir.PID_FILE).unlink(missing_ok=True)


def _reap(pid: int) -> None:
    """When this process started the daemon (tests do), collect its exit status."""
    with contextlib.suppress(ChildProcessError):
        os.waitpid(pid, os.WNOHANG)


def job_counts(modelarts: str) -> dict[str, int]:
    """How many jobs the fake ModelArts at ``modelarts`` has in each phase."""
    with urllib.request.urlopen(f"{modelarts}/_majob/jobs", timeout=5) as answer:
        counts: dict[str, int] = json.loads(answer.read())
    return counts


def serve(
    state_dir: Path,
    *,
    buckets: Sequence[str],
    obs_port: int = 0,
    modelarts_port: int = 0,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    announce: Callable[[EmulatorEndpoints], None] | None = None,
) -> None:
    """Run both fakes in this process until SIGTERM or Ctrl-C."""
    from majob.emulator.cloud import EmulatedCloud
    from majob.emulator.modelarts.store import SchemaError
    from majob.emulator.obs.models import ObsServiceError

    try:
        cloud = EmulatedCloud(
            state_dir,
            buckets=buckets,
            obs_port=obs_port,
            modelarts_port=modelarts_port,
            request_timeout=request_timeout,
        )
    except ObsServiceError as error:
        raise ConfigError(error.message) from error
    except SchemaError as error:
        raise ConfigError(str(error)) from error
    except OSError as error:
        raise ConfigError(f"cannot start the emulator: {error.strerror or error}") from error
    stopping = threading.Event()
    previous = {
        signum: signal.signal(signum, lambda *_: stopping.set())
        for signum in (signal.SIGTERM, signal.SIGINT)
    }
    try:
        cloud.start()
        if announce is not None:
            announce(cloud.endpoints)
        while not stopping.wait(0.1):
            pass
    finally:
        cloud.stop()
        for signum, handler in previous.items():
            signal.signal(signum, handler)

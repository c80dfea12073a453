"""What a running emulator publishes: ``state.json`` in its state dir, written once both fakes
answer and removed when they stop.

Every client of ``--profile emulator`` reads it (``majob.spec.emulator_state`` is the reading
half: the file is the whole contract between the two sides). It names both endpoints, the
region and project id the fakes answer for, the published test key pair both fakes accept (not
secrets), and the process that serves them (pid and start time): a stale file, whose process is
gone or whose pid another process has taken since, is told from a live one.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass
from pathlib import Path

from majob.emulator import statedir
from majob.emulator.defaults import (
    DEFAULT_ACCESS_KEY,
    DEFAULT_SECRET_KEY,
    EMULATOR_PROJECT_ID,
    EMULATOR_REGION,
)
from majob.processes import ProcessRef

STATE_FILE = "state.json"


@dataclass(frozen=True)
class EmulatorEndpoints:
    """The two fakes of an emulator and the identity to call them with."""

    obs: str  # http://127.0.0.1:PORT of the fake OBS
    modelarts: str  # http://127.0.0.1:PORT of the fake ModelArts
    region: str = EMULATOR_REGION
    project_id: str = EMULATOR_PROJECT_ID
    access_key: str = DEFAULT_ACCESS_KEY
    secret_key: str = DEFAULT_SECRET_KEY

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def write_state(state_dir: Path, endpoints: EmulatorEndpoints, process: ProcessRef) -> None:
    """Publish ``endpoints``, served by ``process``."""
    state = {**endpoints.to_dict(), "pid": process.pid, "started": process.started}
    statedir.write_private(state_dir / STATE_FILE, json.dumps(state, indent=2) + "\n")


def remove_state(state_dir: Path) -> None:
    (state_dir / STATE_FILE).unlink(missing_ok=True)


def _read(state_dir: Path) -> dict[str, object]:
    try:
        state = json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return state if isinstance(state, dict) else {}


def _process(state: dict[str, object]) -> ProcessRef | None:
    pid, started = state.get("pid"), state.get("started", "")
    if not isinstance(pid, int) or not isinstance(started, str):
        return None
    return ProcessRef(pid, started)


def publisher(state_dir: Path) -> ProcessRef | None:
    """The process the state file names (it may be gone, or be another process by now)."""
    return _process(_read(state_dir))


def running(state_dir: Path) -> tuple[EmulatorEndpoints, ProcessRef] | None:
    """What the state file publishes, while the process that published it still runs."""
    state = _read(state_dir)
    process = _process(state)
    if process is None or not process.is_running():
        return None
    try:
        fields = {name: str(state[name]) for name in EmulatorEndpoints.__dataclass_fields__}
    except KeyError:
        return None  # an older majob's state: its daemon is stopped by the pid it names
    return EmulatorEndpoints(**fields), process

"""The running emulator as a client finds it: where it listens and the identity to call it with.

``majob emulator start``'s daemon writes ``state.json`` into its state dir (``$MAJOB_EMULATOR_DIR``,
else ``./.majob/emulator``) once both fakes answer, and removes it when it stops
(``majob.emulator.statefile`` is the writing half). The file is the whole contract between the
two sides: the endpoints of the fake OBS and the fake ModelArts, the region, the project id, the
emulator's published test key pair (not secrets: docs/emulator.md lists them) and the daemon's
pid and start time. A state file whose process is gone, or whose pid another process has taken
since, is stale. Light on purpose (stdlib only): every ``--profile emulator`` reads it.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from majob.errors import ConfigError
from majob.processes import ProcessRef

STATE_FILE = "state.json"
STATE_DIR_VARIABLE = "MAJOB_EMULATOR_DIR"


@dataclass(frozen=True)
class RunningEmulator:
    """The two fakes of a running emulator and the identity to call them with."""

    obs: str  # http://127.0.0.1:PORT of the fake OBS
    modelarts: str  # http://127.0.0.1:PORT of the fake ModelArts
    region: str
    project_id: str
    access_key: str
    secret_key: str


def emulator_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$MAJOB_EMULATOR_DIR``, else ``.majob/emulator`` under the current directory."""
    configured = (os.environ if environ is None else environ).get(STATE_DIR_VARIABLE)
    return Path(configured) if configured else Path.cwd() / ".majob" / "emulator"


def running_emulator(state_dir: Path | None = None) -> RunningEmulator:
    """The emulator whose state is in ``state_dir`` (default: see above).

    Raises ``ConfigError`` when no live daemon's state is there, or the state lacks a field.
    """
    directory = state_dir or emulator_state_dir()
    path = directory / STATE_FILE
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = None
    if not isinstance(state, dict) or not _daemon_runs(state):
        raise ConfigError(
            f"the emulator is not running (no live daemon state in {directory})",
            hint="start it with `majob emulator start`",
        )
    try:
        return RunningEmulator(
            **{name: str(state[name]) for name in RunningEmulator.__dataclass_fields__}
        )
    except KeyError as error:
        raise ConfigError(
            f"{path}: the emulator's state file lacks {error.args[0]!r}",
            hint="restart it: `majob emulator stop && majob emulator start`",
        ) from None


def _daemon_runs(state: Mapping[str, object]) -> bool:
    """The process the state names still runs (a state without a start time, from an older
    majob, cannot be verified and counts as gone)."""
    pid, started = state.get("pid"), state.get("started", "")
    if not isinstance(pid, int) or not isinstance(started, str):
        return False
    return ProcessRef(pid, started).is_running()

"""Where the running emulator listens, and the test identity its clients use.

Light on purpose (stdlib only): the CLI, the profiles and the service layer read it to point a
client at ``majob emulator start``'s daemon without importing the emulator itself.

The daemon writes ``state.json`` into its state dir (``$MAJOB_EMULATOR_DIR``, else
``./.majob/emulator``) once both fakes answer, and removes it when it stops. It names the
daemon's pid and start time: a state file whose process is gone, or whose pid another process
has taken since, is stale.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

from majob.errors import ConfigError
from majob.processes import ProcessRef

EMULATOR_PROJECT_ID = "0" * 31 + "1"  # a fixed 32-hex project id, like a real one
EMULATOR_REGION = "cn-north-4"
# The emulator's documented test keys (not secrets): the pair the fake OBS has always taken.
EMULATOR_ACCESS_KEY = "MAJOBFAKEACCESSKEY00"
EMULATOR_SECRET_KEY = "majob-fake-secret-key-0000000000000000000"
# Seconds the fake OBS waits for a client that stopped in the middle of a body (S3: ~20).
DEFAULT_REQUEST_TIMEOUT = 20.0
STATE_FILE = "state.json"
PID_FILE = "emulator.pid"
LOCK_FILE = "emulator.lock"


@dataclass(frozen=True)
class EmulatorEndpoints:
    """The two fakes of a running emulator and the identity to call them with."""

    obs: str  # http://127.0.0.1:PORT of the fake OBS
    modelarts: str  # http://127.0.0.1:PORT of the fake ModelArts
    region: str = EMULATOR_REGION
    project_id: str = EMULATOR_PROJECT_ID
    access_key: str = EMULATOR_ACCESS_KEY
    secret_key: str = EMULATOR_SECRET_KEY

    def to_dict(self) -> dict[str, str]:
        return asdict(self)


def emulator_state_dir(environ: Mapping[str, str] | None = None) -> Path:
    """``$MAJOB_EMULATOR_DIR``, else ``.majob/emulator`` under the current directory."""
    configured = (os.environ if environ is None else environ).get("MAJOB_EMULATOR_DIR")
    return Path(configured) if configured else Path.cwd() / ".majob" / "emulator"


def read_state(state_dir: Path) -> dict[str, object] | None:
    """The daemon's state file, or None when it is absent or unreadable."""
    try:
        data = json.loads((state_dir / STATE_FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def state_process(state: Mapping[str, object]) -> ProcessRef | None:
    """The process a state file names (without a start time: an older majob's, unverifiable)."""
    pid, started = state.get("pid"), state.get("started", "")
    if not isinstance(pid, int) or not isinstance(started, str):
        return None
    return ProcessRef(pid, started)


def running_emulator(state_dir: Path | None = None) -> EmulatorEndpoints:
    """The endpoints of the daemon whose state is in ``state_dir`` (default: see above).

    Raises ``ConfigError`` when no daemon state is there or its process is gone.
    """
    directory = state_dir or emulator_state_dir()
    state = read_state(directory)
    daemon = state_process(state) if state is not None else None
    if state is None or daemon is None or not daemon.is_running():
        raise ConfigError(
            f"the emulator is not running (no live daemon state in {directory})",
            hint="start it with `majob emulator start`",
        )
    try:
        return EmulatorEndpoints(
            obs=str(state["obs"]),
            modelarts=str(state["modelarts"]),
            region=str(state.get("region", EMULATOR_REGION)),
            project_id=str(state.get("project_id", EMULATOR_PROJECT_ID)),
        )
    except KeyError as error:
        raise ConfigError(
            f"{directory / STATE_FILE}: the emulator's state file lacks {error.args[0]!r}",
            hint="restart it: `majob emulator stop && majob emulator start`",
        ) from None

"""The fake OBS as a process of its own: what ``majob emulator obs`` (and ``python -m
majob.emulator.obs``) parses its arguments into, and the serving loop. The first line on stdout
is the endpoint (``http://127.0.0.1:PORT``); the process serves until SIGTERM or Ctrl-C.
"""

from __future__ import annotations

import json
import signal
import sys
from pathlib import Path
from typing import Any

from majob.emulator.defaults import (
    DEFAULT_ACCESS_KEY,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_SECRET_KEY,
    EMULATOR_REGION,
)
from majob.emulator.obs.faults import FaultRule
from majob.emulator.obs.models import ObsServiceError
from majob.emulator.obs.server import FakeObsServer
from majob.errors import ConfigError


def parse_credentials(items: list[str]) -> dict[str, str]:
    """``AK:SK`` pairs; none means the documented test pair."""
    if not items:
        return {DEFAULT_ACCESS_KEY: DEFAULT_SECRET_KEY}
    pairs = {}
    for item in items:
        access_key, sep, secret_key = item.partition(":")
        if not sep or not access_key or not secret_key:
            # Never echo the argument: it may hold a secret.
            raise ConfigError("--credential wants ACCESS_KEY:SECRET_KEY")
        pairs[access_key] = secret_key
    return pairs


def load_fault_rules(path: Path) -> list[FaultRule]:
    """A JSON list of fault rules (the fields of ``FaultRule``)."""
    try:
        data: Any = json.loads(path.read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"cannot read fault rules {path}: {error.strerror}") from error
    except json.JSONDecodeError as error:
        raise ConfigError(f"{path}:{error.lineno}:{error.colno}: {error.msg}") from error
    if not isinstance(data, list):
        raise ConfigError(f"{path}: fault rules must be a JSON list of objects")
    rules = []
    for number, item in enumerate(data, start=1):
        try:
            if not isinstance(item, dict):
                raise ValueError("a rule must be an object")
            rules.append(FaultRule.from_dict(item))
        except (TypeError, ValueError) as error:
            raise ConfigError(f"{path}: rule {number}: {error}") from error
    return rules


def serve(
    *,
    port: int = 0,
    data_dir: Path | None = None,
    region: str = EMULATOR_REGION,
    buckets: list[str] | None = None,
    credentials: dict[str, str] | None = None,
    faults: list[FaultRule] | None = None,
    seed: int = 0,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> None:
    """Run until SIGTERM or Ctrl-C; the first stdout line is the endpoint."""
    server = FakeObsServer(
        port=port,
        data_dir=data_dir,
        credentials=credentials,
        region=region,
        seed=seed,
        request_timeout=request_timeout,
    )
    try:
        server.backend.ensure_buckets(buckets or [])
    except ObsServiceError as error:
        server.stop()
        raise ConfigError(error.message) from error
    for rule in faults or []:
        server.faults.add(rule)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stdout.write(server.endpoint + "\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()

"""A faithful fake OBS server (moto-style). ``models`` holds the operations and OBS's rules
(records in ``state``, bodies in ``blobs``, persistence in ``journal``); ``server`` speaks HTTP
through the handlers per resource (``buckets``, ``objects``, ``multipart``, on ``request``'s
plumbing and ``wire``'s formats); ``auth`` checks signatures and presigned URLs, ``checksums``
and ``conditions`` what S3 checks of a body and a GET; ``faults`` injects failures and logs
requests.

One entry point in three shapes:

- ``with fake_obs() as server: server.endpoint`` in tests (a thread of this process);
- ``FakeObsServer(...).start()`` / ``.stop()`` for a longer-lived in-process fake;
- ``python -m majob.emulator.obs --port 0 --data DIR`` (or ``majob emulator obs``): its own
  process, printing its endpoint on the first line of stdout.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

from majob.emulator.defaults import (
    DEFAULT_ACCESS_KEY,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_SECRET_KEY,
    EMULATOR_REGION,
)
from majob.emulator.obs.faults import FaultRule, LoggedRequest
from majob.emulator.obs.server import FakeObsServer


@contextmanager
def fake_obs(
    *,
    port: int = 0,
    data_dir: Path | None = None,
    credentials: Mapping[str, str] | None = None,
    buckets: tuple[str, ...] = (),
    region: str = EMULATOR_REGION,
    seed: int = 0,
    tokens: Mapping[str, str] | None = None,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
) -> Iterator[FakeObsServer]:
    """A running fake OBS on 127.0.0.1 for the duration of the block; ``buckets`` are created.
    ``credentials`` maps access keys to secret keys (empty: no signature checks), ``tokens``
    access keys to the security token their requests must carry; a client that stalls longer
    than ``request_timeout`` seconds in the middle of a body gets 400 RequestTimeout."""
    server = FakeObsServer(
        port=port,
        data_dir=data_dir,
        credentials=credentials,
        region=region,
        seed=seed,
        tokens=tokens,
        request_timeout=request_timeout,
    )
    server.backend.ensure_buckets(buckets)
    with server:
        yield server


__all__ = [
    "DEFAULT_ACCESS_KEY",
    "DEFAULT_SECRET_KEY",
    "FakeObsServer",
    "FaultRule",
    "LoggedRequest",
    "fake_obs",
]

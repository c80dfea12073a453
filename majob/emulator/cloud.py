"""An emulated cloud: the fake OBS and the fake ModelArts together, on free ports of 127.0.0.1.

``EmulatedCloud`` runs both in threads of this process (the jobs still run as subprocesses); the
fake ModelArts reads and writes the fake OBS's state directly. It publishes the state file
(``statefile.py``) a client's ``--profile emulator`` reads; the daemon (``majob emulator start``)
is an ``EmulatedCloud`` in a process of its own.

State lives in ``state_dir``: ``modelarts/`` (sqlite database, job trees), ``obs/`` (the fake
OBS's objects), ``state.json`` (endpoints, pid and start time), ``emulator.pid`` (the process
holding the dir) and ``emulator.lock``, held from construction to ``stop()`` so that no second
emulator opens the same state (``statedir.py``). Without a ``state_dir`` a temporary one is used
and removed at the end.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from majob.emulator import statedir, statefile
from majob.emulator.defaults import DEFAULT_BUCKETS, DEFAULT_REQUEST_TIMEOUT
from majob.emulator.modelarts.agency import JobAgency
from majob.emulator.modelarts.server import FakeModelArtsServer
from majob.emulator.modelarts.storage import FakeObsStorage
from majob.emulator.obs.server import FakeObsServer
from majob.emulator.statefile import EmulatorEndpoints
from majob.processes import ProcessRef


class EmulatedCloud:
    """Both fakes, started and stopped together."""

    def __init__(
        self,
        state_dir: Path | None = None,
        *,
        buckets: Sequence[str] = DEFAULT_BUCKETS,
        obs_port: int = 0,
        modelarts_port: int = 0,
        python: str | None = None,
        upload_period: float = 30.0,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self._temporary = state_dir is None
        self.state_dir = (
            Path(tempfile.mkdtemp(prefix="majob-emulator-")) if state_dir is None else state_dir
        )
        statedir.make_private_dir(self.state_dir)
        self._lock = statedir.hold(self.state_dir)
        try:
            # Left by an emulator that died: it names a process that no longer serves.
            statefile.remove_state(self.state_dir)
            statedir.write_private(
                self.state_dir / statedir.PID_FILE, ProcessRef.current().to_text()
            )
            self.obs = FakeObsServer(
                port=obs_port, data_dir=self.state_dir / "obs", request_timeout=request_timeout
            )
        except BaseException:
            self._release()
            raise
        try:
            self.obs.backend.ensure_buckets(buckets)
            self.modelarts = FakeModelArtsServer(
                self.state_dir / "modelarts",
                storage=FakeObsStorage(
                    self.obs.backend, JobAgency(self.obs.credentials, self.obs.tokens)
                ),
                port=modelarts_port,
                python=python,
                upload_period=upload_period,
            )
        except BaseException:
            try:
                self.obs.stop()
            finally:
                self._release()
            raise

    @property
    def endpoints(self) -> EmulatorEndpoints:
        return EmulatorEndpoints(obs=self.obs.endpoint, modelarts=self.modelarts.endpoint)

    def start(self) -> EmulatedCloud:
        self.obs.start()
        self.modelarts.start()
        statefile.write_state(self.state_dir, self.endpoints, ProcessRef.current())
        return self

    def stop(self) -> None:
        """Stop the jobs (they end Abnormal), then both servers; remove the state file."""
        statefile.remove_state(self.state_dir)
        try:
            self.modelarts.stop()
        finally:
            try:
                self.obs.stop()
            finally:
                self._release()

    def _release(self) -> None:
        """Give the state dir up (the pid file first: it names the holder); once."""
        if not self._lock.is_locked:
            return  # stopped before: the files may be another emulator's by now
        (self.state_dir / statedir.PID_FILE).unlink(missing_ok=True)
        self._lock.release()
        if self._temporary:
            shutil.rmtree(self.state_dir, ignore_errors=True)

    def __enter__(self) -> EmulatedCloud:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextmanager
def emulated_cloud(
    state_dir: Path | None = None, buckets: Sequence[str] = DEFAULT_BUCKETS
) -> Iterator[EmulatorEndpoints]:
    """Both fakes in threads of this process for the duration of the block; yields where they
    listen and the identity to call them with."""
    with EmulatedCloud(state_dir, buckets=buckets) as cloud:
        yield cloud.endpoints

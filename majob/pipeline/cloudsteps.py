"""A cloud stage's step time: from the step files its nodes wrote into the first output's
``profiling/`` folder (``--perf``), read back from OBS once the job has ended."""

from __future__ import annotations

import re
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Protocol

from majob.perf.setup import PROFILING_DIR
from majob.spec.profiles import Profile

_STEP_FILE = re.compile(rf"^{PROFILING_DIR}/([^/]+)/(majob_steps_\d+\.jsonl)$")


class Stored(Protocol):
    """A file a cloud job wrote to an output (``judge.StoredOutput``)."""

    @property
    def channel(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def uri(self) -> str: ...


def cloud_step_ms(stored: Sequence[Stored], profile: Profile) -> tuple[float, float] | None:
    """p50 and p95 (ms) of the steps in the job's step files; None when it wrote none."""
    from majob.perf.steps import step_times

    step_files = [f for f in stored if _STEP_FILE.match(f.path)]
    if not step_files:
        return None
    with tempfile.TemporaryDirectory(prefix="majob-steps-") as scratch:
        times = step_times([fetch_profiling(step_files, profile, Path(scratch))])
    return (times.p50, times.p95) if times is not None else None


def fetch_profiling(stored: Sequence[Stored], profile: Profile, target: Path) -> Path:
    """The ``profiling/`` files among ``stored`` (of the first output holding any) downloaded
    under ``target``, as they are laid out in the output; the local ``profiling/`` folder."""
    wanted = [f for f in stored if f.path.startswith(f"{PROFILING_DIR}/")]
    from majob.service.connect import open_store
    from majob.storage.uri import ObsUri

    store = open_store(profile)
    try:
        for file in (f for f in wanted if f.channel == wanted[0].channel):
            uri = ObsUri.parse(file.uri)
            local = target / file.path
            local.parent.mkdir(parents=True, exist_ok=True)
            local.write_bytes(store.get_bytes(uri.bucket, uri.key))
    finally:
        store.close()
    return target / PROFILING_DIR

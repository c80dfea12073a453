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
    found = [(f, m) for f in stored if (m := _STEP_FILE.match(f.path))]
    if not found:
        return None
    first = found[0][0].channel
    from majob.perf.steps import step_times
    from majob.service.connect import open_store
    from majob.storage.uri import ObsUri

    store = open_store(profile)
    try:
        with tempfile.TemporaryDirectory(prefix="majob-steps-") as scratch:
            for file, match in found:
                if file.channel != first:
                    continue
                uri = ObsUri.parse(file.uri)
                target = Path(scratch) / match.group(1) / match.group(2)
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(store.get_bytes(uri.bucket, uri.key))
            times = step_times([Path(scratch)])
    finally:
        store.close()
    return (times.p50, times.p95) if times is not None else None

"""``python -m majob.data.stage_main obs://SRC DIR``: the copy engine as a process, what the
transfer job's container runs on the mounted volume (and what a user can run on any machine
that mounts the share).

It prints one ``majob-stage: files=<done>/<total> bytes=<done>/<total>`` line about every 2% of
the bytes (a job's log is read line by line: the CLI following it turns them into a bar), then
the summary and one ``majob-stage-done:`` line (files, bytes, the listing's digest: what
``majob data stage`` records), or the error's lines, and exits with the error's code. OBS is
reached at ``--endpoint`` (else the way ``open_store`` says, ``MAJOB_OBS_ENDPOINT``) with the job
agency's temporary credentials when the container has them (``OBS_ACCESS_KEY_ID``,
``OBS_SECRET_ACCESS_KEY``, ``OBS_SECURITY_TOKEN``), else majob's own (environment or credentials
file); no secret is printed.
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from majob.data.manifest import StagedFile
from majob.errors import MajobError

if TYPE_CHECKING:
    from majob.storage.config import ObsConfig

PROGRESS = "majob-stage:"
DONE = "majob-stage-done:"
STEP = 0.02  # a progress line per 2% of the bytes


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m majob.data.stage_main")
    parser.add_argument("source", help="obs://bucket/folder/")
    parser.add_argument("dest", type=Path, help="the folder on the mounted volume")
    parser.add_argument("--jobs", type=int, default=8)
    parser.add_argument("--verify-full", action="store_true", help="re-hash every file")
    parser.add_argument(
        "--endpoint", help="the OBS endpoint, e.g. https://obs.REGION.myhuaweicloud.com"
    )
    parser.add_argument("--region", help="the OBS region (else from the endpoint)")
    args = parser.parse_args(argv)
    try:
        config = _config(args.endpoint, args.region)
        return _stage(config, args.source, args.dest, args.jobs, args.verify_full)
    except MajobError as error:
        for line in error.lines():
            print(f"error: {line}", file=sys.stderr, flush=True)
        return error.exit_code


def _config(endpoint: str | None, region: str | None) -> ObsConfig:
    """Where OBS is and who reads it: the agency's temporary credentials in a job's container."""
    from majob.storage.config import Credentials, ObsConfig

    agency = None
    if os.environ.get("OBS_ACCESS_KEY_ID") and os.environ.get("OBS_SECRET_ACCESS_KEY"):
        agency = Credentials(
            os.environ["OBS_ACCESS_KEY_ID"],
            os.environ["OBS_SECRET_ACCESS_KEY"],
            os.environ.get("OBS_SECURITY_TOKEN") or None,
            source="the job's agency (OBS_ACCESS_KEY_ID)",
        )
    return ObsConfig.from_env(endpoint=endpoint, region=region, credentials=agency)


def _stage(config: ObsConfig, source: str, dest: Path, jobs: int, full: bool) -> int:
    from majob.data.stage_copy import list_source, stage_tree
    from majob.storage.obs import open_store
    from majob.storage.uri import ObsUri

    src = ObsUri.parse(source).as_dir()
    with open_store(config) as store:
        dest.mkdir(parents=True, exist_ok=True)
        listed = list_source(store, src, dest)
        meter = _Meter(len(listed.objects), sum(o.size for o in listed.objects))
        report = stage_tree(
            store, src, dest, jobs=jobs, full_verify=full, on_file=meter.add, listed=listed
        )
    print(report.summary(), flush=True)
    if report.extra:
        print(f"note: {len(report.extra)} file(s) under {dest} are not in the source (kept)")
    done = f"files={report.files} bytes={report.bytes} digest={listed.digest}"
    print(f"{DONE} {done}", flush=True)
    return 0


class _Meter:
    def __init__(self, files: int, total: int) -> None:
        self.files, self.total = files, total
        self.done_files = self.done_bytes = 0
        self._next = 0.0
        self._lock = threading.Lock()

    def add(self, staged: StagedFile) -> None:
        with self._lock:
            self.done_files += 1
            self.done_bytes += staged.size
            share = self.done_bytes / self.total if self.total else 1.0
            if share >= self._next or self.done_files == self.files:
                self._next = share + STEP
                print(
                    f"{PROGRESS} files={self.done_files}/{self.files} "
                    f"bytes={self.done_bytes}/{self.total}",
                    flush=True,
                )


if __name__ == "__main__":
    sys.exit(main())

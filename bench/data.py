"""Staging OBS -> a volume folder: majob's copier against ``rclone copy`` of the same, and an
unchanged re-stage (issue 38). Goals: the first stage's wall time <= 1x rclone's; the
re-stage <= 0.1x of the first.

::

    .venv/bin/python bench/data.py --quick     # 2,000 files of 4 KiB and one 64 MiB file
    .venv/bin/python bench/data.py             # 20,000 files and one 1 GiB file
    .venv/bin/python bench/data.py --only job  # the 4-node job alone (--quick: 128 MiB)

The fake OBS runs in a process of its own (``python -m majob.emulator.obs``); the data is put
there with majob's sync (so the big file carries the ``md5`` metadata majob writes); each
client then copies it into a fresh folder on this machine's disk (what the volume's folder is in
the emulator). Times are wall times of whole processes, start-up included. Before each run the
page cache's dirty data is written out (``os.sync``): otherwise the run after the upload (majob's
first stage) would pay for writing back the data just put on the fake, and each run after a copy
for the copy before it.

Then a 4-node job on the emulated ModelArts reads a 2 GiB input (``--quick``: 128 MiB) from an
SFS volume, and the same input downloaded from OBS by every node: both wall times and the bytes
moved (``bench/data_volume.py``).
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from data_volume import measure_volume_job, print_volume_job
from obs_sync import majob_env, make_data, ratio, rclone_env, run_process

from majob.storage.obs import ObsObjectStore
from majob.storage.sync import sync_dir
from majob.storage.uri import ObsUri
from majob.testing import FAKE_BUCKET, fake_obs_process, obs_config

PREFIX = "stage-bench/"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true", help="2,000 files and 64 MiB")
    parser.add_argument("--only", choices=("stage", "job"), help="one of the two measurements")
    args = parser.parse_args()
    ok = True
    if args.only != "job":
        ok = bench_stage(args.quick)
    if args.only != "stage":
        result = measure_volume_job(128 if args.quick else 2048)
        print_volume_job(result, ratio)
        ok = ok and result["obs"]["phase"] == result["sfs"]["phase"] == "Completed"
    return 0 if ok else 1


def bench_stage(quick: bool) -> bool:
    """The first stage and an unchanged re-stage against ``rclone copy``; True when both
    stages exited 0."""
    files, big_mib = (2000, 64) if quick else (20_000, 1024)
    with tempfile.TemporaryDirectory(prefix="majob-bench-data-") as tmp_text:
        tmp = Path(tmp_text)
        small, big = make_data(tmp / "src", files, big_mib)
        with fake_obs_process() as fake:
            with ObsObjectStore(obs_config(fake.endpoint)) as store:
                for folder in (small, big):
                    sync_dir(
                        store,
                        folder,
                        ObsUri(FAKE_BUCKET, PREFIX + folder.name + "/"),
                        cache_dir=tmp / "cache",
                    )
            env = majob_env(fake.endpoint, tmp / "cache")
            stage = [sys.executable, "-m", "majob.data.stage_main", f"obs://{FAKE_BUCKET}/{PREFIX}"]
            os.sync()
            first = run_process([*stage, str(tmp / "majob")], env)
            os.sync()
            again = run_process([*stage, str(tmp / "majob")], env)
            os.sync()
            if shutil.which("rclone"):
                rclone = run_process(
                    [
                        "rclone",
                        "copy",
                        f"fake:{FAKE_BUCKET}/{PREFIX}",
                        str(tmp / "rclone"),
                        "--transfers",
                        "8",
                        "--checkers",
                        "8",
                    ],
                    rclone_env(fake.endpoint, tmp),
                )
            else:
                rclone = None
    for name, run in (("majob stage", first), ("majob re-stage", again), ("rclone copy", rclone)):
        if run is not None:
            cpu = f"cpu {run[4]:6.2f} s"  # user + system: what a busy machine leaves of wall
            print(f"{name:16} {run[0]:8.2f} s  {cpu}  exit {run[2]}  rss {run[1]:.0f} MiB")
    if rclone is not None:
        print(f"first stage / rclone copy: {ratio(first[0], rclone[0])} (goal <= 1x)")
    print(f"re-stage / first stage:    {ratio(again[0], first[0])} (goal <= 0.1x)")
    return first[2] == 0 and again[2] == 0


if __name__ == "__main__":
    sys.exit(main())

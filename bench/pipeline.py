"""``majob pipeline`` against its three stages run by hand, side by side, in one run.

(a) the MNIST example through local → debug → formal on the emulated cloud:
    `majob pipeline job_specs/mnist.yaml --profile emulator --upload-inputs` (a fresh ledger)
    against the same three stages by hand: `majob run job_specs/mnist.yaml`, then
    `majob submit ... --stage debug --wait --upload-inputs`, then `... --stage formal --wait`.
    Rounds alternate which goes first. Goal: at most 1.1x.
(b) a re-run with nothing changed (every stage skipped, the reason printed): the median of
    several `majob pipeline` processes, next to `majob --version` (the floor any command pays).
    Goal: under 0.5 s.

The emulated cloud runs in this process (threads), as the tests run it; its jobs are processes.
Every command is a real `majob` process in a scratch directory (its runs and ledger go there).

    .venv/bin/python bench/pipeline.py [--rounds 1] [--reruns 5]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "job_specs" / "mnist.yaml"
MAJOB = [sys.executable, "-m", "majob"]


def timed(args: list[str], cwd: Path) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [*MAJOB, *args], cwd=cwd, capture_output=True, text=True, env=os.environ.copy()
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(
            f"`majob {' '.join(args)}` failed ({done.returncode}):\n{done.stdout}{done.stderr}"
        )
    return elapsed


def by_hand(cwd: Path) -> float:
    spec = str(SPEC)
    cloud = ["--profile", "emulator", "--wait"]
    return (
        timed(["run", spec], cwd)
        + timed(["submit", spec, "--stage", "debug", "--upload-inputs", *cloud], cwd)
        + timed(["submit", spec, "--stage", "formal", *cloud], cwd)
    )


def pipeline(cwd: Path) -> float:
    return timed(["pipeline", str(SPEC), "--profile", "emulator", "--upload-inputs"], cwd)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1, help="pipeline/by-hand pairs")
    parser.add_argument("--reruns", type=int, default=5, help="unchanged re-runs timed")
    options = parser.parse_args()

    from majob.emulator.cloud import EmulatedCloud

    scratch = Path(tempfile.mkdtemp(prefix="majob-bench-pipeline-"))
    os.environ["MAJOB_EMULATOR_DIR"] = str(scratch / "emulator")
    os.environ["MAJOB_CONFIG_DIR"] = str(scratch / "config")
    os.environ.pop("MAJOB_PROFILE", None)
    piped: list[float] = []
    manual: list[float] = []
    with EmulatedCloud(scratch / "emulator", buckets=("majob-demo",)):
        for index in range(options.rounds):
            cwd = scratch / f"round-{index}"
            (cwd / "pipeline").mkdir(parents=True)
            (cwd / "by-hand").mkdir()
            order = [("pipeline", pipeline), ("by-hand", by_hand)]
            if index % 2:
                order.reverse()
            for name, run in order:
                seconds = run(cwd / name)
                (piped if name == "pipeline" else manual).append(seconds)
                print(f"round {index + 1}: {name:8} {seconds:6.2f} s", flush=True)
        rerun_dir = scratch / "round-0" / "pipeline"
        reruns = [
            timed(["pipeline", str(SPEC), "--profile", "emulator"], rerun_dir)
            for _ in range(options.reruns)
        ]
        floor = [timed(["--version"], rerun_dir) for _ in range(options.reruns)]

    ratio = statistics.median(piped) / statistics.median(manual)
    print()
    print(
        f"(a) MNIST local+debug+formal: majob pipeline {statistics.median(piped):.2f} s, by hand "
        f"{statistics.median(manual):.2f} s: {ratio:.2f}x (goal <= 1.1x)"
    )
    print(
        f"(b) unchanged re-run: {statistics.median(reruns):.2f} s median of {len(reruns)} "
        f"(goal < 0.5 s); majob --version {statistics.median(floor):.2f} s"
    )


if __name__ == "__main__":
    main()

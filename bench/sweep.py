"""``majob sweep`` against the same trials submitted by hand, and what pruning saves.

(a) a 4-trial sweep (4 at once) of a plain-python trial script on the emulated cloud, against
    the 4 trial specs submitted by hand with ``majob.submit`` and then waited for, all 4 at
    once. An untimed warm-up sweep runs the trial template's local smoke (the ledger skips it
    after: it passed for this code and spec) and uploads the inputs, so the ratio is the
    sweep's own overhead: Optuna's study, the polling, the table. Rounds alternate which goes
    first. Goal: at most 1.1x.
(b) a 6-trial sweep, one at a time, over a space with a bad region (x = 5.0: far worse loss at
    every step), with ``prune: median`` and without: the time pruning saves, and which trials
    it stopped.

The emulated cloud runs in this process (threads), as the tests run it; its jobs are processes.

    .venv/bin/python bench/sweep.py [--rounds 2]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e"))

from sweep.conftest import lay_out  # noqa: E402  (the tests' trial project)

from majob.sweep.run import Sweep  # noqa: E402
from majob.sweep.space import suggest, trial_spec  # noqa: E402
from majob.testing import emulated_cloud_environment  # noqa: E402

SLOW = "stages:\n  debug: {hyperparameters: {epochs: 4, pause: 0.5}}\n"
FOUR = """\
  space:
    x: {float: [0.0, 1.0]}
  objective: {metric: loss, goal: min}
  trials: 4
  parallel: 4
  seed: 7
"""
BAD_REGION = """\
  space:
    x: {choice: [0.3, 5.0]}
  objective: {metric: loss, goal: min}
  trials: 6
  parallel: 1
  prune: PRUNE
  prune_after: 0
  seed: 6
"""


def swept(spec: Path) -> float:
    started = time.perf_counter()
    result = Sweep(spec, profile="emulator", report=lambda _: None).run()
    assert all(r.state == "completed" for r in result.rows), result
    return time.perf_counter() - started


def by_hand(spec: Path) -> float:
    """The same 4 trial specs (the values the sweep's sampler draws), submitted, then waited."""
    import optuna

    import majob

    started = time.perf_counter()  # a user's submit loads the spec too
    sweep = Sweep(spec, profile="emulator", report=lambda _: None)
    block = sweep.block
    study = optuna.create_study(sampler=optuna.samplers.TPESampler(seed=block.seed))
    specs = [
        trial_spec(sweep.spec, block.stage, k, suggest(study.ask(), block.space))
        for k in range(block.trials)
    ]
    jobs = [majob.submit(s, block.stage, profile="emulator") for s in specs]
    for job in jobs:
        assert job.wait().ok, job
        assert job.service is not None
        job.service.close()
    return time.perf_counter() - started


def overhead(root: Path, rounds: int) -> None:
    spec = lay_out(root / "a", "four", FOUR, extra=SLOW)
    # Untimed: the warm-up sweep runs the local smoke and uploads the inputs, for both sides.
    Sweep(spec, profile="emulator", upload_inputs=True, report=lambda _: None).run()
    sweeps, hands = [], []
    for k in range(rounds):
        pair = (swept, by_hand) if k % 2 == 0 else (by_hand, swept)
        for run in pair:
            (sweeps if run is swept else hands).append(run(spec))
    s, h = statistics.median(sweeps), statistics.median(hands)
    print(
        f"(a) 4 trials, 4 at once: sweep {s:.2f} s, by hand {h:.2f} s: {s / h:.2f}x (goal <= 1.1x)"
    )


def pruning(root: Path) -> None:
    times = {}
    for prune in ("none", "median"):
        spec = lay_out(root / prune, f"bad-{prune}", BAD_REGION.replace("PRUNE", prune), SLOW)
        started = time.perf_counter()
        result = Sweep(spec, profile="emulator", upload_inputs=True, report=lambda _: None).run()
        times[prune] = time.perf_counter() - started
        states = " ".join(f"{r.params['x']}:{r.state}" for r in result.rows)
        print(f"(b) prune {prune:6}: {times[prune]:.1f} s ({states})")
    saved = times["none"] - times["median"]
    print(f"(b) pruning saved {saved:.1f} s of {times['none']:.1f} s")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=2)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(scratch)
        with emulated_cloud_environment(root / "cloud"):
            overhead(root, args.rounds)
            pruning(root)


if __name__ == "__main__":
    main()

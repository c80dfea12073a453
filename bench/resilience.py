"""Time lost to a failure half-way through the MNIST example, with and without resuming.

Two resume rehearsals (``majob.pipeline.rehearsal``), each three local runs: uninterrupted,
every node killed at 50% of the epochs, restarted.

(a) with resume: the spec as it is; the restart finds train_url/ckpt/ (fault_tolerance.
    checkpoints) and goes on from the newest checkpoint.
(b) without resume: the same spec without ``fault_tolerance.checkpoints``, so that (as on
    ModelArts, where only a predownloaded output reaches the new container) nothing survives
    the kill and the restart trains from epoch 0: what any script without resume loses.

Time lost = the killed run's time until the kill + the restart's time - the uninterrupted time.
The goal for (a): at most the time since the last checkpoint at the kill plus the restart's
overhead (its time before the first epoch ends, less one epoch). Both are read from when each
epoch's line arrived. Printed: the times, the bound, and each loss as a ratio of the
uninterrupted run.

    .venv/bin/python bench/resilience.py [--epochs 8] [--margin 1.0] [--runs 3]

``--margin`` (seconds) is added to the bound: the kill lands on a 20 ms poll, and a shared
machine's load moves start-up times between runs.
"""

from __future__ import annotations

import argparse
import itertools
import re
import statistics
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from majob.pipeline.rehearsal import Rehearsal, RehearsalOptions, rehearse
from majob.spec.fault_tolerance import NO_FAULT_TOLERANCE
from majob.spec.load import load_spec
from majob.spec.models import JobSpec

ROOT = Path(__file__).resolve().parents[1]
EPOCH_LINE = re.compile(r"^\[worker-0\] epoch \d+: ")
STARTING = re.compile(r"^\[majob\] run \S+: starting ")


@dataclass
class Clock:
    """When each run started and when each of its epoch lines arrived (monotonic seconds)."""

    runs: list[tuple[float, list[float]]] = field(default_factory=list)

    def __call__(self, line: str) -> None:
        now = time.monotonic()
        if STARTING.match(line):
            self.runs.append((now, []))
        elif EPOCH_LINE.match(line) and self.runs:
            self.runs[-1][1].append(now)


def _bound(clock: Clock, found: Rehearsal) -> tuple[float, float, float]:
    """(epoch time, time since the last checkpoint at the kill, the restart's overhead)."""
    (_, ref_epochs), (kill_start, kill_epochs), (re_start, re_epochs) = clock.runs
    epoch = statistics.median(b - a for a, b in itertools.pairwise(ref_epochs))
    # A checkpoint is saved right after each epoch's line; the one the restart used is that of
    # the epoch before the first it ran (a kill that lands during a save leaves the one before).
    done = len(ref_epochs) - len(re_epochs)
    saved_at = (kill_epochs[done - 1] - kill_start) if 0 < done <= len(kill_epochs) else 0.0
    since_checkpoint = found.fired_after - saved_at
    overhead = (
        max(0.0, (re_epochs[0] - re_start) - epoch) if re_epochs else found.restarted.duration
    )
    return epoch, since_checkpoint, overhead


def _rehearse(spec: JobSpec, runs_dir: Path) -> tuple[Rehearsal, Clock]:
    clock = Clock()
    options = RehearsalOptions(runs_dir=runs_dir, on_line=clock)
    return rehearse(spec, "50%", options=options), clock


def _round(spec: JobSpec, without: JobSpec, scratch: Path, margin: float) -> tuple[float, ...]:
    """One round, printed; returns (lost with, lost without, bound, uninterrupted)."""
    resumed, clock = _rehearse(spec, scratch / "a")
    restarted, _ = _rehearse(without, scratch / "b")
    epoch, since, overhead = _bound(clock, resumed)
    bound = since + overhead + margin
    print(
        f"  one epoch {epoch:.2f}s; the kill came {since:.2f}s after the checkpoint the restart "
        f"used; the restart's overhead {overhead:.2f}s"
    )
    for name, found in (("with resume", resumed), ("without resume", restarted)):
        ratio = found.time_lost / found.reference.duration
        print(
            f"  {name:15} lost {found.time_lost:6.2f}s = {ratio:.2f}x the uninterrupted "
            f"{found.reference.duration:.2f}s (killed after {found.fired_after:.2f}s, restart "
            f"{found.restarted.duration:.2f}s; restarted at {found.verdict.began})"
        )
    if not resumed.passed:
        raise SystemExit("the MNIST example did not resume (or ended elsewhere): see above")
    return resumed.time_lost, restarted.time_lost, bound, resumed.reference.duration


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--margin", type=float, default=1.0)
    parser.add_argument("--runs", type=int, default=1, help="rounds; medians are compared")
    args = parser.parse_args()
    spec = load_spec(
        ROOT / "job_specs" / "mnist.yaml", overrides=[f"hyperparameters.epochs={args.epochs}"]
    )
    without = spec.model_copy(update={"fault_tolerance": NO_FAULT_TOLERANCE})
    print(f"MNIST, {args.epochs} epochs, every node killed half-way ({args.runs} round(s))")
    rounds = []
    for number in range(args.runs):
        with tempfile.TemporaryDirectory() as scratch:
            rounds.append(_round(spec, without, Path(scratch) / str(number), args.margin))
    lost_with, lost_without, bound, plain = (
        statistics.median(c) for c in zip(*rounds, strict=True)
    )
    print(
        f"medians: with resume {lost_with:.2f}s ({lost_with / plain:.2f}x the uninterrupted "
        f"{plain:.2f}s), without {lost_without:.2f}s ({lost_without / plain:.2f}x)"
    )
    if lost_with > 0:
        print(f"  without / with resume: {lost_without / lost_with:.2f}x")
    else:  # the machine's load moved the runs' times more than the failure cost
        print("  without / with resume: n/a (with resume lost no measurable time)")
    held = lost_with <= bound
    print(
        f"goal: with resume, at most {bound:.2f}s (since the checkpoint + the restart's overhead "
        f"+ {args.margin:g}s margin): {'met' if held else 'NOT met'}"
    )
    sys.exit(0 if held else 1)


if __name__ == "__main__":
    main()

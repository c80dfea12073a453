"""CLI start-up of two revisions, side by side: is a change slower to start?

Each revision is checked out into a temporary git worktree and run by this venv's Python with
``PYTHONPATH`` pointing at it (the same libraries for both), interleaved so that load on the
machine hits both alike; the median wall time of each command is printed with B's ratio to A.
A refactoring should leave every ratio near 1.00 (issue 19: not slower).

    .venv/bin/python bench/startup_ab.py REV_A [REV_B] [--runs 21]   (REV_B: HEAD)
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
COMMANDS = {
    "--help": ["--help"],
    "validate": ["validate", "job_specs/mnist.yaml"],
    "check": ["check", "examples/mnist/train.py"],
}


def _run(tree: Path, args: list[str]) -> float:
    env = {**os.environ, "PYTHONPATH": str(tree)}
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-m", "majob", *args], cwd=tree, env=env, capture_output=True, check=False
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):  # check exits 1 when it reports errors
        raise SystemExit(f"{tree}: majob {' '.join(args)} failed: {done.stderr[-500:]!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("rev_a")
    parser.add_argument("rev_b", nargs="?", default="HEAD")
    parser.add_argument("--runs", type=int, default=21)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="majob-ab-") as scratch:
        trees = {}
        for label, rev in (("A", args.rev_a), ("B", args.rev_b)):
            tree = Path(scratch) / label
            subprocess.run(
                ["git", "worktree", "add", "--quiet", "--detach", str(tree), rev],
                cwd=ROOT,
                check=True,
            )
            subprocess.run([sys.executable, "-m", "compileall", "-q", str(tree / "majob")])
            trees[label] = tree
        try:
            times = {(t, c): [] for t in trees for c in COMMANDS}
            for _ in range(args.runs):
                for name, command in COMMANDS.items():
                    for label, tree in trees.items():
                        times[(label, name)].append(_run(tree, command))
        finally:
            for tree in trees.values():
                subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT)
    print(f"A = {args.rev_a}, B = {args.rev_b}; medians of {args.runs}, interleaved")
    for name in COMMANDS:
        a = statistics.median(times[("A", name)])
        b = statistics.median(times[("B", name)])
        print(f"  majob {name:9} A {a * 1000:5.0f} ms   B {b * 1000:5.0f} ms   B/A {b / a:.2f}")


if __name__ == "__main__":
    main()

"""CLI start-up, side by side: `majob validate`, `majob --help`, bare Python, `aws --version`.

Each command runs ``--runs`` times, interleaved so that load on the machine hits all alike; the
median wall time of each is printed with ratios. Goals (issue 34, speed round 4): `majob
validate` at most 8x bare Python start-up (the Typer + pydantic + ruamel.yaml floor alone is
~7x), `majob --help` at most 4x.

    .venv/bin/python bench/cli_startup.py [--runs 15] [--spec job_specs/mnist.yaml]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What any Typer + pydantic + ruamel.yaml CLI pays before doing anything: Typer, pydantic with
# one model built and validated, the YAML loader. majob validate cannot start faster.
LIBRARY_FLOOR = """\
import typer
from pydantic import BaseModel
from ruamel.yaml import YAML
class Model(BaseModel):
    field: int = 1
Model(field=2)
"""


def _time(command: list[str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}): {done.stderr!r}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--spec", default="job_specs/mnist.yaml")
    args = parser.parse_args()

    bindir = Path(sys.executable).parent
    majob = str(bindir / "majob")
    aws = shutil.which("aws", path=str(bindir)) or shutil.which("aws")
    commands: dict[str, list[str]] = {
        "python -c pass": [sys.executable, "-c", "pass"],
        "library floor": [sys.executable, "-c", LIBRARY_FLOOR],
        "majob --help": [majob, "--help"],
        "majob validate": [majob, "validate", args.spec],
    }
    if aws:
        commands["aws --version"] = [aws, "--version"]
    else:
        print("aws not found: pip install awscli (it is in the dev extra)")

    for command in commands.values():  # warm the page cache once
        _time(command)
    samples: dict[str, list[float]] = {name: [] for name in commands}
    for _ in range(args.runs):
        for name, command in commands.items():
            samples[name].append(_time(command))
    median = {name: statistics.median(values) for name, values in samples.items()}

    print(f"{'command':<18} {'median ms':>10} {'min ms':>8}   ({args.runs} runs each)")
    for name, values in samples.items():
        print(f"{name:<18} {median[name] * 1000:>10.1f} {min(values) * 1000:>8.1f}")
    bare = median["python -c pass"]
    validate = median["majob validate"]
    print()
    print(f"majob validate / python -c pass = {validate / bare:.2f}x   (goal <= 8x)")
    print(f"majob --help   / python -c pass = {median['majob --help'] / bare:.2f}x   (goal <= 4x)")
    floor = median["library floor"]
    print(
        f"library floor  / python -c pass = {floor / bare:.2f}x   "
        f"(typer + pydantic + ruamel.yaml alone; majob validate adds {validate - floor:+.3f} s)"
    )
    if "aws --version" in median:
        ratio = validate / median["aws --version"]
        print(f"majob validate / aws --version  = {ratio:.2f}x")


if __name__ == "__main__":
    main()

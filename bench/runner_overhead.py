"""The local runner's cost, side by side with running the same thing without it.

(a) A trivial script: `majob run SPEC` (a real process: CLI start-up, spec loading, code copy,
    guard, record) against `python script.py`; also `majob validate SPEC` (the CLI's start-up and
    spec loading alone) and `majob.run_local` called in-process. Printed: median wall times and
    the overhead in seconds (goal: at most 0.3 s).
(b) The 4-node DDP example: `majob run job_specs/ddp_resnet.yaml --nodes 4` against
    `torchrun --standalone --nproc_per_node 4` on its torchrun-style variant, same data, same
    hyperparameters, one thread per process in both. Printed: median wall times and their ratio
    (goal: at most 1.1x).

Commands are interleaved so that load on the machine hits both sides alike.

    .venv/bin/python bench/runner_overhead.py [--runs 9] [--ddp-runs 3] [--nodes 4]
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

TRIVIAL_SPEC = """\
name: trivial
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
"""


def _timed(command: list[str], env: dict[str, str] | None = None) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=ROOT, capture_output=True, env=env, check=False)
    elapsed = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr.decode()}")
    return elapsed


def _interleaved(runs: int, sides: dict[str, Callable[[], float]]) -> dict[str, float]:
    times: dict[str, list[float]] = {name: [] for name in sides}
    for _ in range(runs):
        for name, side in sides.items():
            times[name].append(side())
    return {name: statistics.median(values) for name, values in times.items()}


def trivial(runs: int, work: Path) -> None:
    from majob.runner.local import run_local
    from majob.spec.load import load_spec

    (work / "code").mkdir()
    script = work / "code" / "train.py"
    script.write_text("print('hello')\n")
    spec_file = work / "trivial.yaml"
    spec_file.write_text(TRIVIAL_SPEC)
    runs_dir = work / "runs"
    majob = [sys.executable, "-m", "majob", "run", str(spec_file), "--runs-dir", str(runs_dir)]
    # The CLI's own start-up and spec loading, which every majob command pays (bench/cli_startup).
    validate = [sys.executable, "-m", "majob", "validate", str(spec_file)]

    def in_process() -> float:
        start = time.perf_counter()
        run_local(load_spec(spec_file), runs_dir=runs_dir, on_line=lambda _: None)
        return time.perf_counter() - start

    medians = _interleaved(
        runs,
        {
            "python script.py": lambda: _timed([sys.executable, str(script)]),
            "majob validate (CLI floor)": lambda: _timed(validate),
            "majob run": lambda: _timed(majob),
            "majob.run_local (in-process)": in_process,
        },
    )
    bare = medians["python script.py"]
    print(f"(a) trivial script, median of {runs} runs")
    for name, seconds in medians.items():
        extra = "" if seconds is bare else f"   overhead {seconds - bare:+.3f} s"
        print(f"    {name:<30} {seconds:6.3f} s{extra}")
    overhead = medians["majob run"] - bare
    runner_part = medians["majob run"] - medians["majob validate (CLI floor)"]
    verdict = "ok" if overhead <= 0.3 else "ABOVE GOAL"
    print(f"    goal: majob run overhead <= 0.3 s: {overhead:.3f} s, {verdict}")
    print(f"    of which the runner (majob run - majob validate): {runner_part:.3f} s")


def ddp(runs: int, nodes: int, work: Path) -> None:
    out = work / "ddp-out"
    hyper = ["--epochs=5", "--lr=0.05", "--batch_size=64"]
    torchrun = [
        str(Path(sys.executable).with_name("torchrun")),
        "--standalone",
        f"--nproc_per_node={nodes}",
        str(ROOT / "examples/ddp_resnet/train_torchrun.py"),
        f"--data_url={ROOT / 'examples/data'}",
        f"--train_url={out / 'torchrun'}",
        *hyper,
    ]
    majob = [
        sys.executable,
        "-m",
        "majob",
        "run",
        str(ROOT / "job_specs/ddp_resnet.yaml"),
        f"--nodes={nodes}",
        "--set",
        f"outputs.train_url.local={out / 'majob'}",
        "--runs-dir",
        str(work / "runs"),
    ]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # what torchrun sets; the spec sets it too
    medians = _interleaved(
        runs,
        {
            f"torchrun --nproc_per_node {nodes}": lambda: _timed(torchrun, env),
            f"majob run --nodes {nodes}": lambda: _timed(majob),
        },
    )
    (base, ours) = medians.values()
    print(f"(b) DDP ResNet-style example on {nodes} local nodes, median of {runs} runs")
    for name, seconds in medians.items():
        print(f"    {name:<30} {seconds:6.3f} s")
    ratio = ours / base
    print(
        f"    ratio majob/torchrun {ratio:.2f}x; goal <= 1.1x: {'ok' if ratio <= 1.1 else 'ABOVE'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--ddp-runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, default=4)
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        trivial(args.runs, Path(tmp))
        if args.ddp_runs > 0:  # 0 skips (b), the long part
            ddp(args.ddp_runs, args.nodes, Path(tmp))


if __name__ == "__main__":
    main()

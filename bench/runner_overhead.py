"""The local runner's cost, side by side with running the same thing without it.

(a) A trivial script: `majob run SPEC` (a real process: CLI start-up, spec loading, code copy,
    guard, record) against `python script.py`; also `majob validate SPEC` (the CLI's start-up and
    spec loading alone) and `majob.run_local` called in-process. Printed: median wall times and
    the overhead in seconds (goal: at most 0.3 s).
(b) The DDP example on N local nodes (4 unless ``--nodes``; ``--nodes 4 8`` measures both):
    `majob run job_specs/ddp_resnet.yaml --nodes N` against `torchrun --standalone
    --nproc_per_node N` on its torchrun-style variant, same data, same hyperparameters (the
    spec's are overridden with the bench's: the spec's own epochs are not the bench's), one
    thread per process in both, each run into a fresh output dir (the example resumes from a
    checkpoint it finds there, and would skip its training); each run's metrics.json is checked
    for the epochs trained. Printed: median wall times and their ratio (goal: at most 1.05x).

Commands are interleaved so that load on the machine hits both sides alike.

    .venv/bin/python bench/runner_overhead.py [--runs 9] [--ddp-runs 3] [--nodes 4 [8]]
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DDP_GOAL = 1.05  # majob run --nodes N against torchrun --nproc_per_node N

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


DDP_HYPERPARAMETERS = {"epochs": 5, "lr": 0.05, "batch_size": 64}


def _trained_epochs(output: Path) -> int:
    """The epochs a side's run trained from scratch, from its metrics.json (each run writes a
    fresh output dir: a checkpoint left by the run before would be resumed, and skip training)."""
    metrics = json.loads((output / "metrics.json").read_text(encoding="utf-8"))
    return len(metrics["history"])


def ddp(runs: int, nodes: int, work: Path) -> float:
    """Both sides train the same epochs from scratch; returns majob's ratio to torchrun."""
    hyper = [f"--{name}={value}" for name, value in DDP_HYPERPARAMETERS.items()]
    overrides = [f"hyperparameters.{name}={value}" for name, value in DDP_HYPERPARAMETERS.items()]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}  # what torchrun sets; the spec sets it too
    counter = iter(range(1 << 30))

    def torchrun() -> float:
        out = work / f"torchrun-{nodes}-{next(counter)}"
        seconds = _timed(
            [
                str(Path(sys.executable).with_name("torchrun")),
                "--standalone",
                f"--nproc_per_node={nodes}",
                str(ROOT / "examples/ddp_resnet/train_torchrun.py"),
                f"--data_url={ROOT / 'examples/data'}",
                f"--train_url={out}",
                *hyper,
            ],
            env,
        )
        _check_epochs(out)
        return seconds

    def majob() -> float:
        out = work / f"majob-{nodes}-{next(counter)}"
        sets = [f"outputs.train_url.local={out}", *overrides]
        seconds = _timed(
            [
                sys.executable,
                "-m",
                "majob",
                "run",
                str(ROOT / "job_specs/ddp_resnet.yaml"),
                f"--nodes={nodes}",
                *[arg for value in sets for arg in ("--set", value)],
                "--runs-dir",
                str(work / "runs"),
            ]
        )
        _check_epochs(out)
        return seconds

    medians = _interleaved(
        runs,
        {
            f"torchrun --nproc_per_node {nodes}": torchrun,
            f"majob run --nodes {nodes}": majob,
        },
    )
    (base, ours) = medians.values()
    print(f"(b) DDP ResNet-style example on {nodes} local nodes, median of {runs} runs")
    for name, seconds in medians.items():
        print(f"    {name:<30} {seconds:6.3f} s")
    ratio = ours / base
    verdict = "ok" if ratio <= DDP_GOAL else "ABOVE"
    print(f"    ratio majob/torchrun {ratio:.2f}x; goal <= {DDP_GOAL}x: {verdict}")
    return ratio


def _check_epochs(output: Path) -> None:
    epochs = _trained_epochs(output)
    if epochs != DDP_HYPERPARAMETERS["epochs"]:
        raise SystemExit(f"{output}: trained {epochs} epochs, not {DDP_HYPERPARAMETERS['epochs']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9)
    parser.add_argument("--ddp-runs", type=int, default=3)
    parser.add_argument("--nodes", type=int, nargs="+", default=[4], help="e.g. --nodes 4 8")
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory() as tmp:
        trivial(args.runs, Path(tmp))
        for nodes in args.nodes if args.ddp_runs > 0 else ():  # 0 skips (b), the long part
            ddp(args.ddp_runs, nodes, Path(tmp))


if __name__ == "__main__":
    main()

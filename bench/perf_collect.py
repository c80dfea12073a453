"""What step times and ``--perf`` cost the training script (the collection half of issue 33).

The MNIST example (``examples/mnist/train.py``, the 8x8 digits) run directly with this
interpreter, each mode in turn, ``--rounds`` times interleaved (the machine is shared):

- ``plain``: no bootstrap at all;
- ``steps``: ``majob/perf/bootstrap.py`` in steps mode (what every ``majob run`` now pays);
- ``profile``: the bootstrap with the spec's default ``perf:`` schedule (torch.profiler).

Printed per mode: the median wall time of the process and of its training loop (the sum of
every optimizer step but step 0, from the step file; ``plain`` has none), and the ratios side
by side: ``steps/plain`` on the process (goal: no visible difference), ``profile/steps`` on the
loop (goal: <= 1.05, what ModelArts promises for its own lightweight profiling) and on the
process (the trace's export included).

With ``--ddp``: the DDP example (``job_specs/ddp_resnet.yaml``, 2 nodes on gloo) through
``majob run`` with and without ``--perf``, the same ``--rounds``; printed: the median of the
nodes' training loops and ``perf/steps`` on it, and where the difference goes: the median step
the profiler did not record (with and without ``--perf``: the armed-but-idle profiler should
cost nothing), the recorded steps' extra time over that median, and the export (the step after
the last recorded one pays for writing the trace). The recorded steps and the export are a
fixed cost per run; ``--epochs`` sets how many steps it is spread over.

    .venv/bin/python bench/perf_collect.py [--rounds 5] [--epochs 8] [--ddp]
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
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from majob.perf.setup import BOOTSTRAP  # noqa: E402
from majob.spec.perf import Perf  # noqa: E402

SITE = """\
import importlib.util
spec = importlib.util.spec_from_file_location("_majob_perf_bootstrap", {path!r})
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.install()
"""


def _run(mode: str, work: Path, epochs: int) -> tuple[float, float | None]:
    """One run of the example: its wall time and its loop's (None without a step file)."""
    out = Path(tempfile.mkdtemp(dir=work))
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    env.pop("MAJOB_PERF", None)
    if mode != "plain":
        site = out / "site"
        site.mkdir()
        (site / "sitecustomize.py").write_text(SITE.format(path=str(BOOTSTRAP)))
        config: dict[str, object] = {"mode": "steps", "steps_dir": str(out / "steps")}
        if mode == "profile":
            perf = Perf.model_validate({}).model_dump(mode="json")
            config = {"mode": "profile", "profiling_dir": str(out / "profiling"), "perf": perf}
        (out / "perf.json").write_text(json.dumps(config))
        env.update(PYTHONPATH=str(site), MAJOB_PERF=str(out / "perf.json"))
    command = [
        sys.executable,
        str(ROOT / "examples" / "mnist" / "train.py"),
        f"--data_url={ROOT / 'examples' / 'data'}",
        f"--train_url={out / 'model'}",
        f"--epochs={epochs}",
    ]
    started = time.perf_counter()
    subprocess.run(command, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - started
    files = list(out.rglob("majob_steps_*.jsonl"))
    if not files:
        return wall, None
    lines = [json.loads(line) for line in files[0].read_text().splitlines()]
    # Step 0 holds the first batch and one-off set-up, whatever the mode: left out.
    return wall, sum(line["end_ns"] - line["start_ns"] for line in lines[1:]) / 1e9


@dataclass(frozen=True)
class _NodeLoop:
    """One node's training loop (steps 1..N) and the parts of it ``--perf`` may add to."""

    loop: float  # seconds
    idle_step: float  # median step not recorded by the profiler, seconds
    recorded_extra: float  # recorded steps' time over ``idle_step``, seconds
    export_extra: float  # the step after the last recorded one, over ``idle_step``, seconds


def _node_loops(folder: Path) -> list[_NodeLoop]:
    """Each step file's loop under ``folder`` and its parts."""
    loops = []
    for path in sorted(folder.rglob("majob_steps_*.jsonl")):
        lines = [json.loads(line) for line in path.read_text().splitlines()][1:]
        seconds = [(line["end_ns"] - line["start_ns"]) / 1e9 for line in lines]
        recorded = [i for i, line in enumerate(lines) if line.get("profiled")]
        idle = statistics.median(s for i, s in enumerate(seconds) if i not in recorded)
        after = recorded[-1] + 1 if recorded else None
        export = seconds[after] - idle if after is not None and after < len(seconds) else 0.0
        extra = sum(seconds[i] - idle for i in recorded)
        loops.append(_NodeLoop(sum(seconds), idle, extra, export))
    return loops


def _ddp(rounds: int, epochs: int) -> None:
    """``majob run`` of the DDP example with and without ``--perf``: the nodes' loops."""
    spec = ROOT / "job_specs" / "ddp_resnet.yaml"
    loops: dict[str, list[_NodeLoop]] = {"steps": [], "perf": []}
    with tempfile.TemporaryDirectory() as work:
        for index in range(rounds):
            for mode in loops:
                runs = Path(work) / f"{mode}-{index}"
                command = [str(Path(sys.executable).parent / "majob"), "run", str(spec)]
                command += ["--set", f"hyperparameters.epochs={epochs}", "--runs-dir", str(runs)]
                command += ["--perf"] if mode == "perf" else []
                subprocess.run(command, check=True, capture_output=True, cwd=work)
                loops[mode] += _node_loops(runs)

    def median(mode: str, part: str) -> float:
        return statistics.median(getattr(loop, part) for loop in loops[mode])

    steps, perf = median("steps", "loop"), median("perf", "loop")
    idle_steps, idle_perf = median("steps", "idle_step"), median("perf", "idle_step")
    print(f"examples/ddp_resnet (2 nodes), {epochs} epochs, {rounds} rounds (medians per node):")
    print(f"  steps   loop {steps:.3f} s, step not recorded {idle_steps * 1e3:.2f} ms")
    print(f"  --perf  loop {perf:.3f} s, step not recorded {idle_perf * 1e3:.2f} ms")
    print(f"  perf/steps loop               {perf / steps:.3f}x")
    print(f"  perf/steps step not recorded  {idle_perf / idle_steps:.3f}x")
    recorded, export = median("perf", "recorded_extra"), median("perf", "export_extra")
    print(f"  fixed cost per run: recorded steps +{recorded * 1e3:.1f} ms,", end=" ")
    print(f"export +{export * 1e3:.1f} ms")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--epochs", type=int, default=8)
    parser.add_argument("--ddp", action="store_true", help="the DDP example instead")
    args = parser.parse_args()
    if args.ddp:
        _ddp(args.rounds, args.epochs)
        return
    modes = ("plain", "steps", "profile")
    walls: dict[str, list[float]] = {m: [] for m in modes}
    loops: dict[str, list[float]] = {m: [] for m in modes}
    with tempfile.TemporaryDirectory() as work:
        for _ in range(args.rounds):
            for mode in modes:
                wall, loop = _run(mode, Path(work), args.epochs)
                walls[mode].append(wall)
                if loop is not None:
                    loops[mode].append(loop)
    median = {m: statistics.median(walls[m]) for m in modes}
    loop = {m: statistics.median(loops[m]) for m in modes if loops[m]}
    print(f"examples/mnist, {args.epochs} epochs, {args.rounds} rounds (medians):")
    for mode in modes:
        shown = f", loop {loop[mode]:.3f} s" if mode in loop else ""
        each = " ".join(f"{w:.2f}" for w in walls[mode])
        print(f"  {mode:8s} process {median[mode]:.3f} s{shown}  (each process: {each})")
    print(f"  steps/plain   process {median['steps'] / median['plain']:.3f}x")
    print(f"  profile/steps loop    {loop['profile'] / loop['steps']:.3f}x")
    print(f"  profile/steps process {median['profile'] / median['steps']:.3f}x")


if __name__ == "__main__":
    main()

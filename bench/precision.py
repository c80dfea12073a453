"""What ``--dump`` and ``majob compare`` cost (one run; needs ``majob[precision]``).

(a) The MNIST example (one epoch of the 8x8 digits, 23 steps) with ``majob run --dump``
    (statistics, L1, steps 0 and 1) against the same ``majob run`` without: printed, both wall
    times and the dump's cost per dumped step ((with - without) / 2; this includes msprobe's
    import, paid once per process).
(b) ``majob compare A B`` on the two dumps of two such runs against ``msprobe compare -tp -gp``
    called directly on the same ``dump.json`` files, once per dumped step (what majob does for
    you); printed: both wall times and their ratio (goal: at most 1.1x). majob's side also reads
    the loss series and compares the checkpoints.

(c) ``--only grad``: what ``--dump grad`` costs per recorded step (``bench/precision_grad.py``).

    .venv/bin/python bench/precision.py [--rounds 1] [--only grad]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
STEPS = (0, 1)

SPEC = f"""\
name: mnist-bench
code: {{dir: {ROOT / "examples" / "mnist"}, boot_file: train.py, obs: "obs://bench/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u}}
inputs: [{{name: data_url, obs: "obs://bench/data/", local: {ROOT / "examples" / "data"}}}]
outputs: [{{name: train_url, obs: "obs://bench/out/"}}]
hyperparameters: {{epochs: 1, lr: 0.01, batch_size: 64}}
precision: {{task: statistics, level: L1, steps: [{", ".join(map(str, STEPS))}]}}
"""


def timed(command: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    done = subprocess.run(command, cwd=cwd, capture_output=True, check=False)
    elapsed = time.perf_counter() - start
    # majob compare exits 1 when runs differ; anything else is a failure of the bench itself.
    if done.returncode not in (0, 1) or (done.returncode == 1 and "compare" not in command):
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stderr.decode()}")
    return elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--only", choices=["grad"], help="Only this part (grad: --dump grad).")
    args = parser.parse_args()
    if args.only == "grad":
        sys.path.insert(0, str(Path(__file__).parent))
        from precision_grad import main as grad_main

        grad_main()
        return
    majob, msprobe = str(BIN / "majob"), str(BIN / "msprobe")
    with tempfile.TemporaryDirectory(prefix="majob-bench-precision-") as scratch:
        work = Path(scratch)
        (work / "spec.yaml").write_text(SPEC, encoding="utf-8")
        runs = work / "runs"
        run = [majob, "run", "spec.yaml", "--runs-dir", str(runs)]
        plain, dumped = [], []
        for _ in range(args.rounds):
            plain.append(timed(run, work))
            dumped.append(timed([*run, "--dump"], work))
        dumped.append(timed([*run, "--dump"], work))  # a second dump to compare with
        without, with_dump = statistics.median(plain), statistics.median(dumped)
        print(f"mnist 1 epoch, without --dump: {without:.2f} s; with --dump: {with_dump:.2f} s")
        print(f"  dump cost per dumped step: {(with_dump - without) / len(STEPS):.2f} s")

        dumps = sorted(p for p in runs.rglob("precision-dump") if p.is_dir())[-2:]
        golden, target = dumps
        ours, theirs = [], []
        for _ in range(args.rounds):
            ours.append(timed([majob, "compare", str(golden), str(target), "--spec", "b"], work))
            started = time.perf_counter()
            for step in STEPS:
                a = next((dumps[0] / f"step{step}").iterdir()) / "dump.json"
                b = next((dumps[1] / f"step{step}").iterdir()) / "dump.json"
                out = work / f"msprobe-{step}"
                timed([msprobe, "compare", "-tp", str(b), "-gp", str(a), "-o", str(out)], work)
            theirs.append(time.perf_counter() - started)
        mine, direct = statistics.median(ours), statistics.median(theirs)
        print(
            f"compare {len(STEPS)} steps: majob compare {mine:.2f} s; msprobe compare x"
            f"{len(STEPS)} {direct:.2f} s; ratio {mine / direct:.2f}x (goal <= 1.1x)"
        )


if __name__ == "__main__":
    main()

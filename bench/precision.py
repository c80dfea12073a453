"""What ``--dump`` and ``majob compare`` cost (one run; needs ``majob[precision]``).

(a) The MNIST example (one epoch of the 8x8 digits, 23 steps) with ``majob run --dump``
    (statistics, L1, steps 0 and 1) against the same ``majob run`` without: printed, both wall
    times and the dump's cost per dumped step ((with - without) / 2; this includes msprobe's
    import, paid once per process).
(b) ``majob compare A B`` on the two dumps of two such runs against ``msprobe compare -tp -gp``
    called directly on the same ``dump.json`` files, once per dumped step (what majob does for
    you); printed: both wall times and their ratio (goal: at most 1.1x). majob's side also reads
    the loss series and compares the checkpoints.

(c) ``--only compare-speed``: ``majob compare`` on two ~500 MB ``tensor`` dumps against
    ``msprobe compare -tp -gp`` on the same pair (msprobe 26.2's CLI has no ``-f pytorch``): a
    seeded synthetic dump in msprobe's layout (``step0/rank0/{dump,stack,construct}.json``,
    ``dump_tensor_data/*.pt``, the statistics msprobe writes), B = A plus seeded noise; printed:
    both wall times and their ratio (goal: at most 1.1x).
(d) ``--only corpus``: tests/precision_corpus (planted differences, each a reference and a
    planted ``majob run --dump``): a table of case, expected, found, ok.
(e) ``--only grad``: what ``--dump grad`` costs per recorded step (``bench/precision_grad.py``).

    .venv/bin/python bench/precision.py [--rounds 1] [--only dump-cost|compare-speed|corpus|grad]
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
    parser.add_argument(
        "--only", choices=("dump-cost", "compare-speed", "corpus", "grad"), default="dump-cost"
    )
    parser.add_argument("--dump-mb", type=int, default=500, help="compare-speed: MB per dump")
    args = parser.parse_args()
    if args.only == "compare-speed":
        compare_speed(args.rounds, args.dump_mb)
    elif args.only == "corpus":
        corpus()
    elif args.only == "grad":
        sys.path.insert(0, str(Path(__file__).parent))
        from precision_grad import main as grad_main

        grad_main()
    else:
        dump_cost(args.rounds)


def dump_cost(rounds: int) -> None:
    """(a) and (b): the MNIST example with and without --dump, then compare against msprobe."""
    majob, msprobe = str(BIN / "majob"), str(BIN / "msprobe")
    with tempfile.TemporaryDirectory(prefix="majob-bench-precision-") as scratch:
        work = Path(scratch)
        (work / "spec.yaml").write_text(SPEC, encoding="utf-8")
        runs = work / "runs"
        run = [majob, "run", "spec.yaml", "--runs-dir", str(runs)]
        plain, dumped = [], []
        for _ in range(rounds):
            plain.append(timed(run, work))
            dumped.append(timed([*run, "--dump"], work))
        dumped.append(timed([*run, "--dump"], work))  # a second dump to compare with
        without, with_dump = statistics.median(plain), statistics.median(dumped)
        print(f"mnist 1 epoch, without --dump: {without:.2f} s; with --dump: {with_dump:.2f} s")
        print(f"  dump cost per dumped step: {(with_dump - without) / len(STEPS):.2f} s")

        dumps = sorted(p for p in runs.rglob("precision-dump") if p.is_dir())[-2:]
        golden, target = dumps
        ours, theirs = [], []
        for _ in range(rounds):
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


TENSOR_ELEMENTS = 1 << 20  # 4 MiB of float32 per tensor


def synthetic_tensor_dump(root: Path, mb: int, noise: float) -> Path:
    """A ``tensor`` dump of one step and rank in msprobe's layout, about ``mb`` MB of tensors:
    APIs ``Functional.linear.<i>.forward`` with one input and one output each, seeded (the same
    tensors for every ``root``), plus ``noise`` times seeded normal noise."""
    import json

    import torch

    rank_dir = root / "precision-dump" / "step0" / "rank0"
    data_dir = rank_dir / "dump_tensor_data"
    data_dir.mkdir(parents=True)
    apis = max(1, mb * (1 << 20) // (2 * 4 * TENSOR_ELEMENTS))
    generator, jitter = torch.Generator().manual_seed(0), torch.Generator().manual_seed(1)
    entries: dict[str, object] = {}
    for index in range(apis):
        api = f"Functional.linear.{index}.forward"
        sides: dict[str, list[object]] = {}
        for side in ("input", "output"):
            tensor = torch.randn(TENSOR_ELEMENTS, generator=generator)
            tensor += noise * torch.randn(TENSOR_ELEMENTS, generator=jitter)
            name = f"{api}.{side}.0.pt"
            torch.save(tensor, data_dir / name)
            sides[side] = [
                {
                    "type": "torch.Tensor", "dtype": "torch.float32", "shape": [TENSOR_ELEMENTS],
                    "Max": tensor.max().item(), "Min": tensor.min().item(),
                    "Mean": tensor.mean().item(), "Norm": tensor.norm().item(),
                    "requires_grad": False, "data_name": name,
                }
            ]  # fmt: skip
        entries[api] = {"input_args": sides["input"], "input_kwargs": {}, "output": sides["output"]}
    header = {"task": "tensor", "level": "L1", "framework": "pytorch"}
    dump = {**header, "dump_data_dir": str(data_dir), "data": entries}
    (rank_dir / "dump.json").write_text(json.dumps(dump, indent=1), encoding="utf-8")
    frame = "File /bench/train.py, line 1, in forward, \n y = model(x)"
    stack = {str(i): [[api], [frame]] for i, api in enumerate(entries)}
    (rank_dir / "stack.json").write_text(json.dumps(stack), encoding="utf-8")
    (rank_dir / "construct.json").write_text("{}", encoding="utf-8")
    return root / "precision-dump"


def compare_speed(rounds: int, mb: int) -> None:
    """(c): majob compare and msprobe compare on the same two synthetic tensor dumps."""
    majob, msprobe = str(BIN / "majob"), str(BIN / "msprobe")
    with tempfile.TemporaryDirectory(prefix="majob-bench-compare-") as scratch:
        work = Path(scratch)
        started = time.perf_counter()
        golden = synthetic_tensor_dump(work / "A", mb, 0.0)
        target = synthetic_tensor_dump(work / "B", mb, 1e-3)
        size = sum(p.stat().st_size for p in golden.rglob("*") if p.is_file())
        print(f"two tensor dumps of {size / 1e6:.0f} MB each made in "
              f"{time.perf_counter() - started:.1f} s")  # fmt: skip
        ours, theirs = [], []
        for index in range(rounds):
            ours.append(timed([majob, "compare", str(golden), str(target), "--spec", "b"], work))
            pair = [str(d / "step0" / "rank0" / "dump.json") for d in (target, golden)]
            out = work / f"msprobe-{index}"
            theirs.append(
                timed([msprobe, "compare", "-tp", pair[0], "-gp", pair[1], "-o", str(out)], work)
            )
        mine, direct = statistics.median(ours), statistics.median(theirs)
        print(
            f"compare two {size / 1e6:.0f} MB tensor dumps: majob compare {mine:.2f} s; "
            f"msprobe compare {direct:.2f} s; ratio {mine / direct:.2f}x (goal <= 1.1x)"
        )


def corpus() -> None:
    """(d): every planted difference of tests/precision_corpus, found or missed."""
    sys.path.insert(0, str(ROOT / "tests" / "precision_corpus"))
    from corpus import run_corpus, table  # type: ignore[import-not-found]

    with tempfile.TemporaryDirectory(prefix="majob-bench-corpus-") as scratch:
        started = time.perf_counter()
        rows = run_corpus(Path(scratch), str(BIN / "majob"))
        print(table(rows))
        found = sum(r.ok for r in rows)
        print(f"{found} of {len(rows)} found in {time.perf_counter() - started:.0f} s")


if __name__ == "__main__":
    main()

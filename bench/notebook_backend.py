"""``majob submit --wait`` on the two backends, side by side, against the emulated cloud.

The same job (it prints ``--lines`` lines of about 100 bytes over about two seconds) is submitted
with ``MAJOB_BACKEND=rest`` (the official REST client) and ``MAJOB_BACKEND=notebook`` (the notebook
SDK, here the stand-in of ``tests/e2e/service/standin``), alternately, ``--rounds`` times each,
through the CLI in this process. For each it prints the median wall time and the median number of
requests the fake ModelArts answered, by kind: the notebook backend reads each task's whole log
preview at every poll, where the REST backend asks only for the lines after the last one it has.

    .venv/bin/python bench/notebook_backend.py [--rounds 3] [--lines 2000]
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "e2e" / "service" / "standin"))

SCRIPT = """\
import argparse, time
parser = argparse.ArgumentParser()
parser.add_argument("--lines", type=int, default=0)
args, _ = parser.parse_known_args()
for i in range(args.lines):
    print(f"line {i:08d} " + "x" * 80, flush=True)
    if i % 100 == 0:
        time.sleep(0.1)
"""

SPEC = """\
name: nb{round}
code: {{dir: code, boot_file: train.py, obs: "obs://majob-demo/nbbench/code/"}}
image: {{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}}
resources: {{flavor: modelarts.vm.cpu.8u}}
hyperparameters: {{lines: {lines}}}
"""

KINDS = {
    "create": r"^/v2/[^/]+/training-jobs$",
    "show": r"^/v2/[^/]+/training-jobs/[^/]+$",
    "log preview": r"/logs/preview$",
    "log lines": r"/logs/worker-\d+$",
    "search": r"training-job-searches$",
}


def one_submit(
    project: Path, backend: str, round_: int, lines: int, cloud
) -> tuple[float, Counter]:
    from typer.testing import CliRunner

    from majob.cli.app import app

    (project / "spec.yaml").write_text(SPEC.format(round=f"{backend[0]}{round_}", lines=lines))
    os.environ["MAJOB_BACKEND"] = backend
    cloud.modelarts.log.clear()
    started = time.perf_counter()
    result = CliRunner().invoke(
        app, ["submit", str(project / "spec.yaml"), "--profile", "emulator", "--wait"]
    )
    took = time.perf_counter() - started
    if result.exit_code != 0:
        raise SystemExit(f"{backend}: submit failed:\n{result.output}")
    counts: Counter = Counter()
    for call in cloud.modelarts.log.entries():
        kind = next((k for k, rx in KINDS.items() if re.search(rx, call.path)), "other")
        counts[kind] += 1
    return took, counts


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--lines", type=int, default=2000)
    args = parser.parse_args()

    from majob.testing import emulated_cloud_environment

    with tempfile.TemporaryDirectory() as tmp, emulated_cloud_environment(Path(tmp)) as cloud:
        project = Path(tmp) / "project"
        (project / "code").mkdir(parents=True)
        (project / "code" / "train.py").write_text(SCRIPT)
        times: dict[str, list[float]] = {"rest": [], "notebook": []}
        calls: dict[str, list[Counter]] = {"rest": [], "notebook": []}
        for round_ in range(args.rounds):
            for backend in ("rest", "notebook"):
                took, counts = one_submit(project, backend, round_, args.lines, cloud)
                times[backend].append(took)
                calls[backend].append(counts)
        print(f"majob submit --wait, a job of {args.lines} log lines, {args.rounds} rounds")
        for backend in ("rest", "notebook"):
            kinds = sorted({k for c in calls[backend] for k in c})
            median_calls = {k: statistics.median(c[k] for c in calls[backend]) for k in kinds}
            shown = ", ".join(f"{k} {v:g}" for k, v in median_calls.items())
            print(f"  {backend:9s} {statistics.median(times[backend]):6.2f} s   requests: {shown}")
        ratio = statistics.median(times["notebook"]) / statistics.median(times["rest"])
        print(f"  notebook / rest wall time: {ratio:.2f}x")


if __name__ == "__main__":
    main()

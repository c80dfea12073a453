"""What ``majob perf`` costs and how well it diagnoses (needs ``majob[perf,torch]``).

(a) A ~100 MB trace: the steps of a real torch.profiler trace (the corpus' host-bound script,
    profiled as the collection side does) repeated until the file is that large. Timed side by
    side, each a fresh process:
    - ``msprof-analyze advisor all -d DIR --agent`` alone, on the same events as the bare array
      it reads;
    - ``majob perf DIR --format json`` (majob's analysis and msprof-analyze's, as a user runs
      it; the goal is at most 1.2x msprof-analyze alone);
    - ``majob perf DIR --no-msprof`` (majob's own analysis only).
    Printed: wall times, the ratios, each run's peak RSS (the largest process; goal < 500 MB).
(b) Diagnosis quality: each script of tests/perf_corpus profiled and diagnosed; printed: its
    expected cause, majob's first finding and its share, and whether the fast control has a
    finding above 5% of a step.

Timing is printed, never asserted.

    .venv/bin/python bench/perf.py [--size-mb 100] [--rounds 1] [--skip-quality]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "tests" / "perf_corpus"
BIN = Path(sys.executable).parent
# Each corpus script and the finding it must get first (null: the fast control, none above 5%).
EXPECTED = json.loads((CORPUS / "expected.json").read_text(encoding="utf-8"))
# Run a command, then print the peak RSS (KiB) of the largest process it waited for.
PEAK = (
    "import resource, subprocess, sys\n"
    "done = subprocess.run(sys.argv[1:], capture_output=True)\n"
    "print(done.returncode, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
)


def profile(script: str, out: Path) -> Path:
    subprocess.run(
        [sys.executable, str(CORPUS / "profile_script.py"), str(CORPUS / f"{script}.py"), str(out)],
        check=True,
        capture_output=True,
        env={"OMP_NUM_THREADS": "1", "PATH": str(BIN)},
    )
    [folder] = (out / "profiling").iterdir()
    return folder


def grow(source: Path, size_mb: float, work: Path) -> tuple[Path, Path, int]:
    """The steps of ``source`` (a torch.profiler trace) repeated, shifted in time, until the
    trace is ``size_mb``: written as a torch.profiler object (for majob) and as torch_npu's
    bare array (for msprof-analyze alone). Returns both rank folders and the event count."""
    events = json.loads(source.read_text())["traceEvents"]
    complete = [e for e in events if e.get("ph") == "X" and e.get("cat") != "Trace"]
    start = min(e["ts"] for e in complete)
    span = max(e["ts"] + e["dur"] for e in complete) - start
    folders = []
    for name in ("majob", "msprof"):
        folder = work / name / "profiling" / "worker-0-rank0_20261206000000_ascend_pt"
        (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
        folders.append(folder)
    paths = [f / "ASCEND_PROFILER_OUTPUT" / "trace_view.json" for f in folders]
    written, copy = 0, 0
    with paths[0].open("w") as as_object, paths[1].open("w") as as_array:
        as_object.write('{"schemaVersion": 1, "traceEvents": [\n')
        as_array.write("[\n")
        while as_object.tell() < size_mb * 1e6:
            for event in complete:
                moved = dict(event, ts=event["ts"] + copy * (span + 100.0))
                if moved["name"].startswith("ProfilerStep#"):
                    moved["name"] = f"ProfilerStep#{written}"
                    written += 1
                text = ("," if copy or event is not complete[0] else "") + json.dumps(moved)
                as_object.write(text + "\n")
                as_array.write(text + "\n")
            copy += 1
        as_object.write('], "traceName": "bench"}\n')
        as_array.write("]\n")
    return folders[0], folders[1], copy * len(complete)


def timed(command: list[str], cwd: Path) -> tuple[float, int, int]:
    """Wall time, exit code and peak RSS (KiB) of ``command``."""
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", PEAK, *command], cwd=cwd, capture_output=True, text=True, check=True
    )
    elapsed = time.perf_counter() - started
    code, rss = (int(v) for v in done.stdout.split())
    return elapsed, code, rss


def analysis_cost(size_mb: float, rounds: int, work: Path) -> None:
    folder = profile("small_ops", work / "source")
    majob_dir, msprof_dir, events = grow(
        folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json", size_mb, work
    )
    size = (majob_dir / "ASCEND_PROFILER_OUTPUT" / "trace_view.json").stat().st_size
    print(f"(a) a {size / 1e6:.0f} MB trace, {events:,} events ({sys.executable})")
    msprof = [
        sys.executable,
        "-c",
        "from msprof_analyze.cli.entrance import msprof_analyze_cli"
        " as m; import sys; sys.argv[0] = 'msprof-analyze'; sys.exit(m())",
    ]
    runs = {
        "msprof-analyze advisor alone": [
            *msprof,
            "advisor",
            "all",
            "-d",
            str(msprof_dir),
            "-o",
            str(work / "adv"),
            "--agent",
        ],
        "majob perf (with msprof-analyze)": [
            str(BIN / "majob"),
            "perf",
            str(majob_dir.parents[1]),
            "--format",
            "json",
        ],
        "majob perf --no-msprof": [
            str(BIN / "majob"),
            "perf",
            str(majob_dir.parents[1]),
            "--format",
            "json",
            "--no-msprof",
        ],
    }
    results: dict[str, list[tuple[float, int, int]]] = {name: [] for name in runs}
    for _ in range(rounds):
        for name, command in runs.items():
            results[name].append(timed(command, work))
    base = statistics.median(t for t, _, _ in results["msprof-analyze advisor alone"])
    for name, measured in results.items():
        wall = statistics.median(t for t, _, _ in measured)
        rss = max(r for _, _, r in measured) / 1024
        codes = sorted({c for _, c, _ in measured})
        print(
            f"  {name:34s} {wall:7.1f} s  {wall / base:5.2f}x  peak RSS {rss:5.0f} MB  exit {codes}"
        )


def quality(work: Path) -> None:
    print("(b) diagnosis quality over tests/perf_corpus (majob's findings, --no-msprof)")
    hits = 0
    for script, expected in EXPECTED.items():
        folder = profile(script, work / "quality" / script)
        done = subprocess.run(
            [str(BIN / "majob"), "perf", str(folder), "--format", "json", "--no-msprof"],
            capture_output=True,
            text=True,
            check=False,
        )
        findings = json.loads(done.stdout)["findings"]
        first = findings[0] if findings else None
        above = [f["key"] for f in findings if f["share_of_step"] > 0.05]
        if expected is None:
            ok = not above
            said = f"findings above 5%: {above or 'none'}"
        else:
            ok = first is not None and first["key"] == expected
            said = (
                "no finding"
                if first is None
                else (f"first: {first['key']} ({100 * first['share_of_step']:.0f}% of a step)")
            )
        hits += ok
        print(
            f"  {script:15s} expected {expected or 'nothing above 5%':18s} {said:45s} "
            f"{'ok' if ok else 'MISS'}"
        )
    print(f"  {hits} of {len(EXPECTED)} as expected")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size-mb", type=float, default=100.0)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--skip-quality", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="majob-bench-perf-") as scratch:
        analysis_cost(args.size_mb, args.rounds, Path(scratch))
        if not args.skip_quality:
            quality(Path(scratch))


if __name__ == "__main__":
    main()

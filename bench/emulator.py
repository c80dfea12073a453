"""``majob submit`` against the emulated cloud, side by side with its peers, in one run.

(a) submit → Running: from starting `majob submit SPEC --profile emulator` (a real process) to the
    job's phase reading Running (polled every 10 ms with the real client). Goal: under 1 s.
(b) log follow lag: a job waits 4 s (for the follower to attach), then prints a wall-clock time
    stamp every 0.1 s; `majob logs JOB --follow` (a real process) prints the lines; the lag is
    when majob printed a line minus when the job printed it. Goal: under 0.5 s.
(c) the MNIST example as an emulated job (`majob submit job_specs/mnist.yaml --stage debug
    --profile emulator --upload-inputs --wait`) against `majob run job_specs/mnist.yaml` with
    the same hyperparameters (the debug stage's one epoch). Goal: at most 1.3x.
(d) a second submit with unchanged code: what the code sync (plan + nothing to send) adds, timed
    in-process around the same ``sync_code`` call submit makes. Goal: under 0.3 s.

The emulated cloud runs in this process (threads), as the tests run it; its jobs are processes.

    .venv/bin/python bench/emulator.py [--runs 5] [--mnist-runs 1]
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
BUCKET = "majob-demo"

STAMPER = """\
import argparse, time
parser = argparse.ArgumentParser()
parser.add_argument("--lines", type=int, default=0)
parser.add_argument("--sleep", type=float, default=0)
parser.add_argument("--delay", type=float, default=0)
args, _ = parser.parse_known_args()
end = time.monotonic() + args.delay  # lets the follower attach before the first line
while time.monotonic() < end:
    time.sleep(0.05)
for i in range(args.lines):
    print(f"stamp {time.time():.6f}", flush=True)
    time.sleep(0.1)
end = time.monotonic() + args.sleep
while time.monotonic() < end:
    time.sleep(0.05)
"""

SPEC = """\
name: bench
code: {dir: code, boot_file: train.py, obs: "obs://majob-demo/bench/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
hyperparameters: {lines: 0, sleep: 0, delay: 0}
"""


def majob(*args: str, check: bool = True) -> subprocess.CompletedProcess[str]:
    done = subprocess.run(
        [sys.executable, "-m", "majob", *args], cwd=ROOT, capture_output=True, text=True
    )
    if check and done.returncode != 0:
        raise SystemExit(f"majob {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done


def job_id_of(output: str) -> str:
    line = next(line for line in output.splitlines() if line.startswith("submitted job "))
    return line.split()[2]


def submit_to_running(work: Path, runs: int) -> tuple[list[float], list[float]]:
    from majob.service.connect import open_service
    from majob.spec.profiles import load_profile

    service = open_service(load_profile("emulator"))
    times, service_side = [], []
    try:
        for run in range(runs):
            name = f"bench-run-{run}"
            start = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "-m", "majob", "submit", str(work / "spec.yaml"),
                 "--profile", "emulator", "--set", f"name={name}",
                 "--set", "hyperparameters.sleep=30"],
                cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            )  # fmt: skip
            job_id = None
            while job_id is None:
                # The id is what majob printed; poll the service for it by name meanwhile.
                jobs, _ = service.search(_by_name(name))
                job_id = jobs[0].id if jobs else None
                if job_id is None:
                    if process.poll() not in (None, 0):
                        raise SystemExit(process.stderr.read() if process.stderr else "failed")
                    time.sleep(0.01)
            while (job := service.get(job_id)).phase != "Running":
                time.sleep(0.01)
            times.append(time.perf_counter() - start)
            # The service's share: from the job's create_time to Running seen here.
            service_side.append(time.time() - (job.create_time or 0) / 1000)
            process.communicate()
            service.terminate(job_id)
    finally:
        service.close()
    return times, service_side


def _by_name(name: str):  # type: ignore[no-untyped-def]
    from majob.service.base import JobFilter

    return JobFilter(name=name)


def follow_lag(work: Path) -> list[float]:
    done = majob("submit", str(work / "spec.yaml"), "--profile", "emulator",
                 "--set", "name=bench-logs", "--set", "hyperparameters.lines=40",
                 "--set", "hyperparameters.delay=4")  # fmt: skip
    job_id = job_id_of(done.stdout)
    follower = subprocess.Popen(
        [sys.executable, "-m", "majob", "logs", job_id, "--follow", "--profile", "emulator"],
        cwd=ROOT, stdout=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    lags = []
    assert follower.stdout is not None
    for line in follower.stdout:
        seen = time.time()
        text = line.strip()
        if " stamp " in f" {text.split('] ', 1)[-1]}":
            lags.append(seen - float(text.rsplit(" ", 1)[-1]))
    follower.wait()
    return lags


def mnist(runs: int) -> tuple[float, float]:
    spec = str(ROOT / "job_specs" / "mnist.yaml")
    emulated, local = [], []
    for run in range(runs):
        start = time.perf_counter()
        majob("submit", spec, "--stage", "debug", "--profile", "emulator", "--upload-inputs",
              "--wait", "--set", f"name=mnist-bench-{run}")  # fmt: skip
        emulated.append(time.perf_counter() - start)
        start = time.perf_counter()
        majob("run", spec, "--set", "hyperparameters.epochs=1")
        local.append(time.perf_counter() - start)
    return statistics.median(emulated), statistics.median(local)


def second_sync(work: Path, runs: int) -> list[float]:
    from majob.service.code import sync_code
    from majob.service.connect import open_store
    from majob.spec.load import load_spec
    from majob.spec.profiles import load_profile

    profile = load_profile("emulator")
    spec = load_spec(work / "spec.yaml", profile=profile)
    store = open_store(profile)
    times = []
    try:
        sync_code(spec, store)  # the first submit's upload
        for _ in range(runs):
            start = time.perf_counter()
            plan, _ = sync_code(spec, store)
            times.append(time.perf_counter() - start)
            assert not plan.uploads
    finally:
        store.close()
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--mnist-runs", type=int, default=1)
    args = parser.parse_args()

    from majob.emulator.cloud import EmulatedCloud

    with tempfile.TemporaryDirectory(prefix="majob-bench-") as temporary:
        work = Path(temporary)
        (work / "code").mkdir()
        (work / "code" / "train.py").write_text(STAMPER)
        (work / "spec.yaml").write_text(SPEC)
        os.environ["MAJOB_EMULATOR_DIR"] = str(work / "emulator")
        os.environ["MAJOB_CONFIG_DIR"] = str(work / "config")
        os.environ["MAJOB_CACHE_DIR"] = str(work / "cache")
        with EmulatedCloud(work / "emulator", buckets=(BUCKET,)):
            majob("obs", "ls", f"obs://{BUCKET}/", check=False)  # warm the page cache
            running, service_side = submit_to_running(work, args.runs)
            lags = follow_lag(work)
            sync = second_sync(work, args.runs)
            emulated, local = mnist(args.mnist_runs)

    def ms(values: list[float]) -> str:
        return f"median {statistics.median(values) * 1000:.0f} ms, max {max(values) * 1000:.0f} ms"

    print(f"(a) submit -> Running ({args.runs} runs): {ms(running)}  [goal < 1000 ms]")
    print(f"    of which create -> Running on the service: {ms(service_side)}")
    print(f"(b) log follow lag ({len(lags)} lines): {ms(lags)}  [goal < 500 ms]")
    print(
        f"(c) MNIST debug: emulated job {emulated:.2f} s, majob run --stage local {local:.2f} s, "
        f"ratio {emulated / local:.2f}x  [goal <= 1.3x]"
    )
    print(f"(d) second submit, code unchanged: sync {ms(sync)}  [goal < 300 ms]")


if __name__ == "__main__":
    main()

"""Benchmark ``majob obs sync`` beside rclone, a plain esdk-obs-python loop and a raw PUT.

The fake OBS runs as its own process (``python -m majob.emulator.obs``, in memory). Data: 2,000
files of 4 KiB in 20 folders, and one 512 MiB file (``--quick``: 200 files and 64 MiB). Every
client runs as a subprocess, so its wall time includes its start-up, and its peak RSS and CPU
time (user + system) are read from ``wait4``; the fake's CPU time during each run comes from
``/proc`` (Linux; it shares the machine, so it counts in every client's wall time); request
counts come from the fake's request log.

Small files, side by side in one run: majob (its defaults), rclone with its defaults and rclone
``--transfers 16 --checkers 16``; each does a first sync, a no-change sync, then a sync after one
file changed, each to its own prefix.

Two modes:
- ``--mode loopback`` (default): no added latency, which measures CPU; also the big file
  (majob, rclone, the SDK and a raw PUT). Goal: majob not slower than rclone on any row.
- ``--mode network``: the fake adds ``--latency-ms`` (20) to every request, as a laptop or a
  notebook VM reaching OBS sees. Goals (issue 13): first sync >= 3x rclone default's files/s and
  >= 1.5x tuned rclone's; no-change and one-changed <= 0.2x rclone default's wall time.

    .venv/bin/python bench/obs_sync.py [--mode loopback|network] [--quick] [--repeat 3]
        [--files N]    (N small files instead of 2,000 / 200; the list-request figure needs 5,000)
        [--big-mib N] [--only small|big]

Every row is the median of ``--repeat`` rounds (3; ``--quick``: 1), its spread in the notes. The
small-file rounds come after a warm-up round and the big-file rounds after one warm-up upload:
the fake's first requests cost it more, which would land on whichever client runs first. The
raw PUT (the ceiling: no hashing, no SDK) runs as a subprocess like every other row, so its
interpreter's start-up counts as theirs does; the same PUT made inside the bench's own process is
printed beside it.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import http.client
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from email.utils import formatdate
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from majob.testing import FakeObsProcess, fake_obs_process

BUCKET = "bench"
MiB = 1 << 20


@dataclass
class Run:
    name: str
    seconds: float
    files: int
    nbytes: int
    requests: Counter[str] = field(default_factory=Counter)
    rss_mib: float | None = None
    cpu_s: float | None = None  # the client's user + system time
    fake_cpu_s: float | None = None  # the fake OBS's, during the run
    note: str = ""

    @property
    def files_per_s(self) -> float:
        return self.files / self.seconds if self.seconds else 0.0

    @property
    def mb_per_s(self) -> float:
        return self.nbytes / MiB / self.seconds if self.seconds else 0.0

    @property
    def lists(self) -> int:
        return self.requests["LIST"]


def make_data(root: Path, files: int, big_mib: int) -> tuple[Path, Path]:
    small = root / "small"
    for i in range(files):
        folder = small / f"dir{i % 20:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"file{i:05d}.bin").write_bytes(os.urandom(4096))
    big = root / "big"
    big.mkdir()
    block = os.urandom(MiB)
    with open(big / "model.bin", "wb") as out:
        for i in range(big_mib):
            out.write(i.to_bytes(8, "little") + block[8:])  # every MiB different
    return small, big


def classify(entry: dict[str, Any]) -> str:
    query = entry["query"]
    if entry["method"] == "GET" and entry["path"].count("/") == 1 and "uploads" not in query:
        return "LIST"
    if "uploads" in query and entry["method"] == "GET":
        return "LIST-UPLOADS"
    if "partNumber" in query:
        return "PART"
    return str(entry["method"])


def count_requests(fake: FakeObsProcess) -> Counter[str]:
    return Counter(classify(e) for e in fake.log())


def process_cpu(pid: int) -> float | None:
    """User + system seconds of a running process (all its threads), from /proc; None off Linux."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_process(command: list[str], env: dict[str, str]) -> tuple[float, float, int, str, float]:
    """Run ``command``; its wall time, peak RSS in MiB (wait4), exit status, stdout and CPU
    seconds (user + system, wait4)."""
    with tempfile.TemporaryFile() as out:
        started = time.perf_counter()
        process = subprocess.Popen(command, env=env, stdout=out)
        _, status, usage = os.wait4(process.pid, 0)
        elapsed = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        text = out.read().decode("utf-8", "replace")
    cpu = usage.ru_utime + usage.ru_stime
    return elapsed, usage.ru_maxrss / 1024, process.returncode, text, cpu


def measure(
    fake: FakeObsProcess,
    name: str,
    command: list[str],
    env: dict[str, str],
    files: int,
    nbytes: int,
) -> Run:
    fake.clear_log()
    fake_before = process_cpu(fake.process.pid)
    seconds, rss, code, output, cpu = run_process(command, env)
    fake_after = process_cpu(fake.process.pid)
    if code != 0:
        raise SystemExit(f"{name}: {command[0]} exited with {code}")
    run = Run(name, seconds, files, nbytes, count_requests(fake), rss, cpu)
    if fake_before is not None and fake_after is not None:
        run.fake_cpu_s = fake_after - fake_before
    applied = re.search(r" in ([\d.]+)s$", output.strip())
    if applied:  # majob's own figure: the apply step alone, without start-up and plan
        run.note = f"(apply {float(applied.group(1)):.2f}s)"
    return run


def clean_env() -> dict[str, str]:
    return {
        k: v
        for k, v in os.environ.items()
        if not k.startswith(("AWS_", "RCLONE_", "HUAWEICLOUD_", "MAJOB_"))
    }


def majob_env(endpoint: str, cache: Path) -> dict[str, str]:
    return {
        **clean_env(),
        "MAJOB_OBS_ENDPOINT": endpoint,
        "HUAWEICLOUD_SDK_AK": DEFAULT_ACCESS_KEY,
        "HUAWEICLOUD_SDK_SK": DEFAULT_SECRET_KEY,
        "MAJOB_CACHE_DIR": str(cache),
    }


def rclone_env(endpoint: str, tmp: Path) -> dict[str, str]:
    # AWS_CA_BUNDLE must not be set: rclone then fails with LoadCustomCABundleError.
    (tmp / "rclone.conf").write_text("", encoding="utf-8")
    return {
        **clean_env(),
        "RCLONE_CONFIG": str(tmp / "rclone.conf"),
        "RCLONE_CONFIG_FAKE_TYPE": "s3",
        "RCLONE_CONFIG_FAKE_PROVIDER": "Other",
        "RCLONE_CONFIG_FAKE_ACCESS_KEY_ID": DEFAULT_ACCESS_KEY,
        "RCLONE_CONFIG_FAKE_SECRET_ACCESS_KEY": DEFAULT_SECRET_KEY,
        "RCLONE_CONFIG_FAKE_ENDPOINT": endpoint,
        "RCLONE_CONFIG_FAKE_FORCE_PATH_STYLE": "true",
        # The fake (as OBS and S3) refuses a V4 scope naming another region; rclone's
        # default for provider Other is us-east-1.
        "RCLONE_CONFIG_FAKE_REGION": "cn-north-4",
    }


PUTFILE_LOOP = """
import sys, time
from pathlib import Path
from obs import ObsClient
endpoint, ak, sk, bucket, prefix, root = sys.argv[1:7]
client = ObsClient(access_key_id=ak, secret_access_key=sk, server=endpoint,
                   signature="v4", region="cn-north-4")
root = Path(root)
for path in sorted(p for p in root.rglob("*") if p.is_file()):
    key = prefix + path.relative_to(root).as_posix()
    result = client.putFile(bucket, key, str(path))
    if result.status >= 300:
        raise SystemExit(f"{key}: {result.status} {result.errorCode}")
client.close()
"""


RAW_PUT = """
import base64, hashlib, hmac, http.client, sys
from email.utils import formatdate
from urllib.parse import urlsplit
endpoint, ak, sk, bucket, key, path = sys.argv[1:7]
parts = urlsplit(endpoint)
with open(path, "rb") as source:
    size = source.seek(0, 2)
    source.seek(0)
    date = formatdate(usegmt=True)
    to_sign = f"PUT\\n\\napplication/octet-stream\\n{date}\\n/{bucket}/{key}"
    signature = base64.b64encode(hmac.new(sk.encode(), to_sign.encode(), hashlib.sha1).digest())
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    connection.putrequest("PUT", f"/{bucket}/{key}")
    connection.putheader("Date", date)
    connection.putheader("Content-Type", "application/octet-stream")
    connection.putheader("Content-Length", str(size))
    connection.putheader("Authorization", f"AWS {ak}:{signature.decode()}")
    connection.endheaders()
    while chunk := source.read(1 << 20):
        connection.send(chunk)
response = connection.getresponse()
response.read()
if response.status != 200:
    raise SystemExit(f"raw PUT: HTTP {response.status}")
"""


def raw_put(endpoint: str, key: str, path: Path) -> float:
    """The same PUT as ``RAW_PUT``, in this process (no interpreter start-up): the old ceiling,
    printed beside the subprocess one."""
    parts = urlsplit(endpoint)
    size = path.stat().st_size
    date = formatdate(usegmt=True)
    content_type = "application/octet-stream"
    to_sign = f"PUT\n\n{content_type}\n{date}\n/{BUCKET}/{key}"
    signature = base64.b64encode(
        hmac.new(DEFAULT_SECRET_KEY.encode(), to_sign.encode(), hashlib.sha1).digest()
    ).decode()
    started = time.perf_counter()
    connection = http.client.HTTPConnection(parts.hostname or "127.0.0.1", parts.port, timeout=120)
    connection.putrequest("PUT", f"/{BUCKET}/{key}")
    for name, value in (
        ("Date", date),
        ("Content-Type", content_type),
        ("Content-Length", str(size)),
        ("Authorization", f"AWS {DEFAULT_ACCESS_KEY}:{signature}"),
    ):
        connection.putheader(name, value)
    connection.endheaders()
    with open(path, "rb") as source:
        while chunk := source.read(MiB):
            connection.send(chunk)
    response = connection.getresponse()
    response.read()
    connection.close()
    if response.status != 200:
        raise SystemExit(f"raw PUT: HTTP {response.status}")
    return time.perf_counter() - started


def delete_prefix(endpoint: str, prefix: str) -> None:
    """Free the fake's memory between big-file runs."""
    from majob.storage.config import Credentials, ObsConfig
    from majob.storage.obs import ObsObjectStore

    config = ObsConfig(
        endpoint=endpoint, credentials=Credentials(DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY)
    )
    with ObsObjectStore(config) as store:
        keys = [o.key for o in store.list_all(BUCKET, prefix)]
        if keys:
            store.delete_many(BUCKET, keys)


def ratio(a: float, b: float) -> str:
    return f"{a / b:.2f}x" if b else "n/a"


RCLONE = "rclone default"
TUNED = "rclone 16/16"
PHASES = ("first", "no change", "one changed")
RAW = "raw http.client PUT big"
RAW_IN = "raw PUT big, in-process"


def print_table(runs: list[Run]) -> None:
    print(f"\nload average (1, 5, 15 min) at the end: {os.getloadavg()} on {os.cpu_count()} CPUs")
    print(
        f"\n{'run':<30} {'s':>7} {'CPU s':>6} {'fake s':>6} {'files/s':>9} {'MB/s':>8} "
        f"{'RSS MiB':>8}  requests"
    )
    for r in runs:
        requests = " ".join(f"{k}={v}" for k, v in sorted(r.requests.items()))
        rss = f"{r.rss_mib:.0f}" if r.rss_mib is not None else "-"
        cpu = f"{r.cpu_s:.2f}" if r.cpu_s is not None else "-"
        fake_cpu = f"{r.fake_cpu_s:.2f}" if r.fake_cpu_s is not None else "-"
        print(
            f"{r.name:<30} {r.seconds:>7.2f} {cpu:>6} {fake_cpu:>6} {r.files_per_s:>9.0f} "
            f"{r.mb_per_s:>8.1f} {rss:>8}  {requests} {r.note}"
        )


def report_network(runs: list[Run], files: int, latency_ms: float, rclone: bool) -> int:
    """The table and the issue-13 goals of the network mode."""
    print_table(runs)
    print(f"\nfloor of a first sync: {files} files x {latency_ms:.0f} ms / connections")
    if not rclone:
        print("rclone is not installed: no ratios (apt-get install rclone)")
        return 0
    by = {r.name: r for r in runs}
    first = by["majob, first"]
    goals = [
        ("first sync files/s, majob / rclone default", first, by[f"{RCLONE}, first"], 3.0),
        ("first sync files/s, majob / rclone 16/16", first, by[f"{TUNED}, first"], 1.5),
    ]
    print("\ngoals (met?)")
    for label, ours, theirs, goal in goals:
        value = ours.files_per_s / theirs.files_per_s
        print(f"  {label}: {value:.2f}x  [>= {goal}x] {'met' if value >= goal else 'NOT met'}")
    for phase in ("no change", "one changed"):
        ours, theirs = by[f"majob, {phase}"], by[f"{RCLONE}, {phase}"]
        value = ours.seconds / theirs.seconds
        print(
            f"  {phase} wall time, majob / rclone default: {value:.2f}x  [<= 0.2x] "
            f"{'met' if value <= 0.2 else 'NOT met'}"
        )
    return 0


@dataclass(frozen=True)
class Clients:
    """What every round runs against: the fake, majob's and rclone's environments, --jobs."""

    fake: FakeObsProcess
    envs: tuple[dict[str, str], dict[str, str]]
    jobs: list[str]


def small_round(clients: Clients, small: Path, files: int, prefix: str) -> list[Run]:
    """One round: first, no-change and one-changed syncs of the small files, every client side
    by side, each to its own fresh ``prefix``-named folder (majob with a cold hash cache)."""
    fake, (env, renv), jobs = clients.fake, clients.envs, clients.jobs
    majob = [sys.executable, "-m", "majob", "obs"]
    commands = {"majob": [*majob, "sync", str(small), f"obs://{BUCKET}/majob-{prefix}/", *jobs]}
    if shutil.which("rclone"):
        commands[RCLONE] = ["rclone", "sync", str(small), f"fake:{BUCKET}/rclone-{prefix}"]
        commands[TUNED] = ["rclone", "sync", str(small), f"fake:{BUCKET}/tuned-{prefix}"]
        commands[TUNED] += ["--transfers", "16", "--checkers", "16"]
    shutil.rmtree(env["MAJOB_CACHE_DIR"], ignore_errors=True)
    runs: list[Run] = []
    for phase in PHASES:
        if phase == "one changed":
            changed = small / "dir07" / "file00007.bin"
            changed.write_bytes(os.urandom(4096))
        sent = {"first": files, "no change": 0, "one changed": 1}[phase]
        for client, command in commands.items():
            use = env if client == "majob" else renv
            name = f"{client}, {phase}"
            runs.append(measure(fake, name, command, use, files, sent * 4096))
    return runs


def small_runs(clients: Clients, small: Path, files: int, repeat: int) -> list[Run]:
    """A warm-up round (the fake's first requests cost it more: that would land on whichever
    client runs first), then ``repeat`` rounds; each row the median of its runs."""
    small_round(clients, small, files, "warm-up")
    return medians(small_round(clients, small, files, f"small{i}") for i in range(max(1, repeat)))


def medians(rounds: Iterable[list[Run]]) -> list[Run]:
    """Each row's run nearest the median of its rounds, noting the spread."""
    by_name: dict[str, list[Run]] = {}
    for got in rounds:
        for run in got:
            by_name.setdefault(run.name, []).append(run)
    chosen_runs = []
    for same in by_name.values():
        median = statistics.median(r.seconds for r in same)
        chosen = min(same, key=lambda r: abs(r.seconds - median))
        if len(same) > 1:
            spread = ", ".join(f"{r.seconds:.2f}" for r in same)
            chosen.note += f" median of {len(same)} ({spread})"
        chosen_runs.append(chosen)
    return chosen_runs


def big_round(clients: Clients, big: Path, big_bytes: int, rclone: bool, cache: Path) -> list[Run]:
    """One run of every big-file client, one after the other."""
    fake, (env, renv), jobs = clients.fake, clients.envs, clients.jobs
    endpoint = fake.endpoint
    majob = [sys.executable, "-m", "majob", "obs"]
    shutil.rmtree(cache, ignore_errors=True)  # no hash cache: cold
    sync_big = [*majob, "sync", str(big), f"obs://{BUCKET}/majob-big/", *jobs]
    got = [measure(fake, "majob sync big, first", sync_big, env, 1, big_bytes)]
    got.append(measure(fake, "majob sync big, no change", sync_big, env, 1, 0))
    delete_prefix(endpoint, "majob-big/")
    got.append(measure(fake, "majob sync big, cache warm", sync_big, env, 1, big_bytes))
    delete_prefix(endpoint, "majob-big/")
    single = [*sync_big, "--multipart-threshold", str(2 * big_bytes // MiB)]
    got.append(measure(fake, "majob big, single PUT", single, env, 1, big_bytes))
    delete_prefix(endpoint, "majob-big/")
    if rclone:
        rcopy = ["rclone", "copy", str(big), f"fake:{BUCKET}/rclone-big"]
        rcopy += ["--transfers", jobs[1]]
        got.append(measure(fake, "rclone copy big", rcopy, renv, 1, big_bytes))
        delete_prefix(endpoint, "rclone-big/")
    one = [sys.executable, "-c", PUTFILE_LOOP, endpoint, DEFAULT_ACCESS_KEY]
    one += [DEFAULT_SECRET_KEY, BUCKET, "sdk-big/", str(big)]
    got.append(measure(fake, "esdk putFile big", one, env, 1, big_bytes))
    delete_prefix(endpoint, "sdk-big/")
    raw = [sys.executable, "-c", RAW_PUT, endpoint, DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY]
    raw += [BUCKET, "raw/model.bin", str(big / "model.bin")]
    got.append(measure(fake, RAW, raw, clean_env(), 1, big_bytes))
    delete_prefix(endpoint, "raw/")
    fake.clear_log()
    seconds = raw_put(endpoint, "raw/model.bin", big / "model.bin")
    got.append(Run(RAW_IN, seconds, 1, big_bytes, count_requests(fake)))
    delete_prefix(endpoint, "raw/")
    return got


def big_runs(
    clients: Clients, big: Path, big_bytes: int, rclone: bool, cache: Path, repeat: int
) -> list[Run]:
    """``repeat`` rounds of the big-file clients; each row the median of its runs."""
    fake, jobs = clients.fake, clients.jobs
    # Warm the fake up once with the biggest shape (a multipart upload: parts, then the
    # joined copy): growing its heap costs page faults, a cost of the emulator that would
    # otherwise land on whichever client runs first.
    warm = [sys.executable, "-m", "majob", "obs", "cp", str(big / "model.bin")]
    run_process([*warm, f"obs://{BUCKET}/warm-up/", *jobs], clients.envs[0])
    delete_prefix(fake.endpoint, "warm-up/")
    return medians(big_round(clients, big, big_bytes, rclone, cache) for _ in range(max(1, repeat)))


def report_small(by: dict[str, Run], files: int, rclone: bool) -> None:
    if rclone:
        for phase in PHASES:
            for other in (RCLONE, TUNED):
                ours, theirs = by[f"majob, {phase}"], by[f"{other}, {phase}"]
                print(
                    f"  {phase}: wall time majob / {other}: "
                    f"{ratio(ours.seconds, theirs.seconds)}  [<= 1x]"
                )
    else:
        print("  rclone is not installed: rclone ratios skipped (apt-get install rclone)")
    # Per 1,000 objects only means something on a tree of thousands (one request lists 1,000
    # keys: 200 files take 1 page, and per 1,000 that reads 5).
    nochange = by["majob, no change"]
    per_k = nochange.lists / files * 1000
    note = "" if files >= 5000 else f"  (a {files}-file tree: run --files 5000 for this figure)"
    print(
        f"  no-change list requests: {nochange.lists} per sync, {per_k:.1f} per 1,000 objects"
        f"  [<= 2 per 1,000]{note}"
    )


def report_big(by: dict[str, Run]) -> None:
    big_first, raw = by["majob sync big, first"], by[RAW]
    print(
        f"  big file MB/s, majob first / raw PUT:      {ratio(big_first.mb_per_s, raw.mb_per_s)}"
        "  [>= 0.6x]"
    )
    for other in ("rclone copy big", "esdk putFile big"):
        if other in by:
            print(
                f"  big file MB/s, majob first / {other + ':':<19}"
                f"{ratio(big_first.mb_per_s, by[other].mb_per_s)}  [>= 1.0x]"
            )
    in_process = ratio(big_first.mb_per_s, by[RAW_IN].mb_per_s)
    print(f"  big file MB/s, majob first / raw PUT in this process (no start-up): {in_process}")
    cached = by["majob sync big, cache warm"]
    print(f"  big file MB/s, majob cache warm / raw:     {ratio(cached.mb_per_s, raw.mb_per_s)}")
    one_put = by["majob big, single PUT"]
    print(f"  big file MB/s, majob single PUT / raw:     {ratio(one_put.mb_per_s, raw.mb_per_s)}")
    print(f"  big file peak RSS of majob: {big_first.rss_mib:.0f} MiB  [< 200 MiB]")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="200 files, a 64 MiB file, big runs once"
    )
    parser.add_argument("--jobs", type=int, default=0, help="majob --jobs (default: majob's)")
    parser.add_argument("--mode", choices=("loopback", "network"), default="loopback")
    parser.add_argument("--latency-ms", type=float, default=20.0, help="network mode latency")
    parser.add_argument(
        "--repeat", type=int, default=0, help="rounds, median reported (default 3; --quick 1)"
    )
    parser.add_argument("--files", type=int, default=0, help="small files (default 2000; 200)")
    parser.add_argument("--big-mib", type=int, default=0, help="the big file (default 512; 64)")
    parser.add_argument(
        "--only", choices=("small", "big"), help="only the small-file or the big-file rows"
    )
    args = parser.parse_args()
    files, big_mib = (200, 64) if args.quick else (2000, 512)
    files, big_mib = args.files or files, args.big_mib or big_mib
    repeat = args.repeat or (1 if args.quick else 3)
    rclone = shutil.which("rclone") is not None
    runs: list[Run] = []

    with tempfile.TemporaryDirectory(prefix="majob-bench-") as tmp_name:
        tmp = Path(tmp_name)
        print(f"data: {files} x 4 KiB in 20 folders, 1 x {big_mib} MiB (in {tmp})", flush=True)
        print(f"load average at the start: {os.getloadavg()} on {os.cpu_count()} CPUs", flush=True)
        needs_big = args.mode == "loopback" and args.only != "small"
        small, big = make_data(tmp, files, big_mib if needs_big else 0)
        with fake_obs_process(buckets=(BUCKET,)) as fake:
            endpoint = fake.endpoint
            envs = (majob_env(endpoint, tmp / "majob-cache"), rclone_env(endpoint, tmp))
            jobs = ["--jobs", str(args.jobs)] if args.jobs else []
            if args.mode == "network":
                fake.add_fault(latency=args.latency_ms / 1000)
                runs = small_runs(Clients(fake, envs, jobs), small, files, repeat)
                fake.clear_faults()
                return report_network(runs, files, args.latency_ms, rclone)
            if args.only != "big":
                runs += small_runs(Clients(fake, envs, jobs), small, files, repeat)
                loop = [sys.executable, "-c", PUTFILE_LOOP, endpoint, DEFAULT_ACCESS_KEY]
                loop += [DEFAULT_SECRET_KEY, BUCKET, "sdk-small/", str(small)]
                runs.append(measure(fake, "esdk putFile loop", loop, envs[0], files, files * 4096))
            if args.only != "small":
                cache = tmp / "majob-cache"
                # as before: majob --jobs 8 and rclone --transfers 8 unless told
                big_jobs = jobs or ["--jobs", "8"]
                big_clients = Clients(fake, envs, big_jobs)
                runs += big_runs(big_clients, big, big_mib * MiB, rclone, cache, repeat)

    print_table(runs)
    by = {r.name: r for r in runs}
    print("\nratios (goal in brackets)")
    if args.only != "big":
        report_small(by, files, rclone)
    if args.only != "small":
        report_big(by)
    return 0


if __name__ == "__main__":
    sys.exit(main())

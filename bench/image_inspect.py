"""``majob image inspect`` on a generated 2 GB image tarball, against ``tar -tvf`` of the same file.

Writes a ``docker save``-style tarball (manifest.json, config with history, uncompressed
``<id>/layer.tar`` layers, as ``docker save`` writes them) of about 2 GB into a temporary
directory: a base layer of many small files, a large-file layer, and an over-1-GB layer that
trips the per-layer check. The file is read once to warm the page cache, then, in interleaved
rounds, as separate processes:

- ``tar -tvf IMAGE.tar``: the peer the issue names. GNU tar seeks over member content on a
  regular file and lists the outer entries only (a few), so it reads a few kilobytes;
- ``tar --no-seek -tvf IMAGE.tar``: the same listing, reading every byte;
- ``tar -xOf IMAGE.tar <layer> | tar -tvf -`` for every layer: what tar needs to tell what
  majob tells (each layer's entries);
- ``majob image inspect IMAGE.tar --format json``, with its peak RSS (``wait4``).

Prints the medians, throughput (file bytes / wall second), ``majob / tar`` throughput ratios
(goal: at least 0.8 of ``tar -tvf``) and majob's peak RSS (goal: under 100 MiB).

    .venv/bin/python bench/image_inspect.py [--size-gb 2] [--rounds 3] [--keep DIR]
"""

from __future__ import annotations

import argparse
import io
import itertools
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

BIN = Path(sys.executable).parent
CHUNK = 1 << 20


class Zeros(io.RawIOBase):
    """``size`` zero bytes, a megabyte at a time: file content without holding it."""

    def __init__(self, size: int) -> None:
        self.left = size

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray | memoryview) -> int:  # type: ignore[override]
        n = min(len(buffer), self.left, CHUNK)
        buffer[:n] = bytes(n)
        self.left -= n
        return n


def write_layer(path: Path, files: Iterator[tuple[str, int]]) -> None:
    with tarfile.open(path, "w", format=tarfile.PAX_FORMAT) as tar:
        for name, size in files:
            info = tarfile.TarInfo(name)
            info.size = size
            info.mode = 0o644
            tar.addfile(info, io.BufferedReader(Zeros(size), CHUNK) if size else None)


def small_files(prefix: str, count: int) -> Iterator[tuple[str, int]]:
    for i in range(count):
        yield f"{prefix}/d{i // 500}/f{i}.py", 512 + (i * 7919) % 7680


def big_files(prefix: str, count: int, size: int) -> Iterator[tuple[str, int]]:
    for i in range(count):
        yield f"{prefix}/lib{i}.so", size


def build_image(directory: Path, total: int) -> tuple[Path, int]:
    """The tarball and its layer count; sizes scale with ``total`` (bytes)."""
    layers = [
        (small_files("usr/share", 30_000), "/bin/sh -c #(nop) ADD file:rootfs in /"),
        (big_files("usr/local/cuda/lib64", 20, int(total * 0.3) // 20), "RUN install cuda"),
        (
            itertools.chain(
                small_files("opt/site-packages", 30_000),
                big_files("opt/torch", 10, int(total * 0.55) // 10),
            ),
            "RUN pip install torch",
        ),
    ]
    names, history = [], [{"created_by": "ENV PYTHONUNBUFFERED=1", "empty_layer": True}]
    out = directory / "image.tar"
    with tarfile.open(out, "w") as outer:
        for number, (files, created_by) in enumerate(layers, start=1):
            layer = directory / f"layer{number}.tar"
            write_layer(layer, files)
            name = f"{number:064x}/layer.tar"
            outer.add(layer, arcname=name)
            layer.unlink()
            names.append(name)
            history.append({"created_by": created_by})
        for name, document in (
            ("config.json", {"architecture": "amd64", "os": "linux", "history": history}),
            (
                "manifest.json",
                [{"Config": "config.json", "RepoTags": ["bench:1"], "Layers": names}],
            ),
        ):
            data = json.dumps(document).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            outer.addfile(info, io.BytesIO(data))
    return out, len(layers)


def timed(command: list[str] | str, *, shell: bool = False) -> tuple[float, int]:
    """Wall seconds and peak RSS (KiB) of one run; output discarded."""
    start = time.perf_counter()
    process = subprocess.Popen(command, shell=shell, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) not in (0, 1):  # inspect exits 1 on its findings
        raise SystemExit(f"failed: {command}")
    return elapsed, usage.ru_maxrss


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--size-gb", type=float, default=2.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--keep", type=Path, help="build (or reuse) the tarball here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="majob-image-bench-") as temp:
        directory = args.keep or Path(temp)
        directory.mkdir(parents=True, exist_ok=True)
        image = directory / "image.tar"
        if not image.exists():
            start = time.perf_counter()
            build_image(directory, int(args.size_gb * 10**9))
            print(f"built {image} in {time.perf_counter() - start:.1f} s")
        size = image.stat().st_size
        with image.open("rb") as warm:  # read once so every run reads from the page cache
            while warm.read(16 * CHUNK):
                pass
        with tarfile.open(image) as outer:
            layers = [m.name for m in outer if m.name.endswith("layer.tar")]
        quoted = str(image).replace("'", "'\\''")
        each_layer = " ; ".join(
            f"tar -xOf '{quoted}' {name} | tar -tvf - > /dev/null" for name in layers
        )
        runs: dict[str, list[float]] = {
            "tar -tvf": [],
            "tar --no-seek -tvf": [],
            "tar, every layer": [],
            "majob": [],
        }
        rss: list[int] = []
        majob = [str(BIN / "majob"), "image", "inspect", str(image), "--format", "json"]
        for _ in range(args.rounds):
            runs["tar -tvf"].append(timed(["tar", "-tvf", str(image)])[0])
            runs["tar --no-seek -tvf"].append(timed(["tar", "--no-seek", "-tvf", str(image)])[0])
            runs["tar, every layer"].append(timed(each_layer, shell=True)[0])
            elapsed, peak = timed(majob)
            runs["majob"].append(elapsed)
            rss.append(peak)
        print(f"image: {size / 10**9:.2f} GB, {len(layers)} layers, {args.rounds} rounds (median)")
        medians = {name: statistics.median(times) for name, times in runs.items()}
        for name, seconds in medians.items():
            print(f"  {name:<20} {seconds:7.3f} s  {size / seconds / 10**9:8.2f} GB/s")
        for peer in ("tar -tvf", "tar --no-seek -tvf", "tar, every layer"):
            goal = " (goal >= 0.8)" if peer == "tar -tvf" else ""
            ratio = medians[peer] / medians["majob"]
            print(f"  majob / {peer} throughput: {ratio:.2f}x{goal}")
        print(f"  majob peak RSS: {max(rss) / 1024:.1f} MiB (goal < 100 MiB)")


if __name__ == "__main__":
    main()

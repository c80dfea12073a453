"""How fast is the fake OBS server? It must not be the bottleneck of bench/obs_sync.py.

The fake runs as its own process (persisting to a temporary directory, as the sync benchmark
runs it). Side by side, on the same server:
- 2,000 PUTs of 4 KiB: esdk-obs-python (keep-alive, V4) sequentially and with 8 threads, and a
  raw ``http.client`` keep-alive loop (no SDK, no signature: the server's own ceiling);
- one 256 MiB file: SDK ``putFile`` against a raw ``http.client`` PUT.

Run: ``.venv/bin/python bench/fake_obs_server.py [--files 2000] [--big-mib 256]``
"""

from __future__ import annotations

import argparse
import http.client
import os
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import urlsplit

from majob.testing import FAKE_BUCKET, fake_obs_process

REFERENCE_FILES_PER_S = 1234.2  # the reference's stdlib prototype, separate process, putFile loop


def sdk_client(endpoint: str):  # type: ignore[no-untyped-def]
    from obs import ObsClient

    from majob.emulator.obs import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY

    return ObsClient(
        access_key_id=DEFAULT_ACCESS_KEY,
        secret_access_key=DEFAULT_SECRET_KEY,
        server=endpoint,
        signature="v4",
        region="cn-north-4",
        long_conn_mode=True,
        max_retry_count=0,
    )


def sdk_small(endpoint: str, count: int, threads: int) -> float:
    client = sdk_client(endpoint)
    payload = os.urandom(4096)

    def put(i: int) -> None:
        result = client.putContent(FAKE_BUCKET, f"sdk{threads}/{i // 100:02d}/{i:05d}", payload)
        assert result.status < 300, result.errorCode

    started = time.perf_counter()
    if threads == 1:
        for i in range(count):
            put(i)
    else:
        with ThreadPoolExecutor(threads) as pool:
            list(pool.map(put, range(count)))
    elapsed = time.perf_counter() - started
    client.close()
    return count / elapsed


def raw_small(endpoint: str, count: int) -> float:
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port)
    payload = os.urandom(4096)
    started = time.perf_counter()
    for i in range(count):
        connection.request("PUT", f"/{FAKE_BUCKET}/raw/{i // 100:02d}/{i:05d}", body=payload)
        response = connection.getresponse()
        response.read()
        assert response.status == 200, response.status
    elapsed = time.perf_counter() - started
    connection.close()
    return count / elapsed


def sdk_big(endpoint: str, path: Path) -> float:
    client = sdk_client(endpoint)
    started = time.perf_counter()
    result = client.putFile(FAKE_BUCKET, "big/sdk.bin", str(path))
    elapsed = time.perf_counter() - started
    assert result.status < 300, result.errorCode
    client.close()
    return path.stat().st_size / elapsed / 1e6


def raw_big(endpoint: str, path: Path) -> float:
    parts = urlsplit(endpoint)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port)
    started = time.perf_counter()
    with path.open("rb") as body:
        connection.request(
            "PUT",
            f"/{FAKE_BUCKET}/big/raw.bin",
            body=body,
            headers={"Content-Length": str(path.stat().st_size)},
        )
        response = connection.getresponse()
        response.read()
    elapsed = time.perf_counter() - started
    assert response.status == 200, response.status
    connection.close()
    return path.stat().st_size / elapsed / 1e6


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--files", type=int, default=2000)
    parser.add_argument("--big-mib", type=int, default=256)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        big = Path(tmp) / "big.bin"
        with big.open("wb") as out:
            for _ in range(args.big_mib):
                out.write(os.urandom(1 << 20))
        # Signatures on for the SDK runs; the raw loop runs against a second, unsigned fake.
        with (
            fake_obs_process(data_dir=Path(tmp) / "signed") as signed,
            fake_obs_process(data_dir=Path(tmp) / "open", extra_args=("--no-auth",)) as unsigned,
        ):
            sdk_client(signed.endpoint).close()  # warm the import
            seq = sdk_small(signed.endpoint, args.files, 1)
            par = sdk_small(signed.endpoint, args.files, 8)
            raw = raw_small(unsigned.endpoint, args.files)
            sdk_mb = sdk_big(signed.endpoint, big)
            raw_mb = raw_big(unsigned.endpoint, big)
            requests = len(signed.log())
    print(f"{args.files} x 4 KiB PUTs, fake OBS in its own process, persisting to disk")
    print(f"  SDK keep-alive, sequential : {seq:8.0f} files/s")
    print(f"  SDK keep-alive, 8 threads  : {par:8.0f} files/s")
    print(f"  raw http.client keep-alive : {raw:8.0f} files/s (server ceiling, no signing)")
    print(f"  SDK sequential / reference prototype ({REFERENCE_FILES_PER_S:.0f} files/s): "
          f"{seq / REFERENCE_FILES_PER_S:.2f}x")  # fmt: skip
    print(f"  SDK sequential / raw       : {seq / raw:.2f}x")
    print(f"{args.big_mib} MiB single PUT")
    print(f"  SDK putFile                : {sdk_mb:8.1f} MB/s")
    print(f"  raw http.client PUT        : {raw_mb:8.1f} MB/s")
    print(f"  SDK / raw                  : {sdk_mb / raw_mb:.2f}x")
    print(f"requests logged by the signed fake: {requests}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

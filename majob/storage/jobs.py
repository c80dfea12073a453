"""How many requests a transfer keeps in flight when not told: from how far the endpoint is."""

from __future__ import annotations

REMOTE_JOBS = 32
NEAR_JOBS = 8
NEAR_SECONDS = 0.005  # a request answered this fast has no network round trip worth hiding


def default_jobs(store: object, bucket: str = "", files: int = 0) -> int:
    """Requests in flight when not told. A small file costs one PUT whose time is mostly the
    network's round trip (20-50 ms from a laptop or a notebook VM): the floor of a sync is
    files x latency / jobs, so 32 keep-alive connections send 2,000 files of 4 KiB in ~1.3 s at
    20 ms, where 8 need 5 s. When the shortest wait for an answer (a request's time but the
    client's own CPU) is under 5 ms, the endpoint is near (the emulator, the same host): there
    is no round trip to hide and more threads only contend for the GIL and the cores, so 8. The
    plan's listing is one sample, and on a busy machine or a fresh connection a poor one: when
    it says far and more than 8 ``files`` are to go, two small requests are asked first."""
    fastest = getattr(store, "fastest_request", None)
    probe = getattr(store, "probe_latency", None)
    if (fastest is None or fastest >= NEAR_SECONDS) and files > NEAR_JOBS and callable(probe):
        fastest = probe(bucket)
    if isinstance(fastest, float) and fastest < NEAR_SECONDS:
        return NEAR_JOBS
    return REMOTE_JOBS

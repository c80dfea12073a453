"""``python -m majob.emulator.obs``: run the fake OBS server as its own process."""

from __future__ import annotations

import argparse
import json
import signal
import sys
from pathlib import Path

from majob.emulator.obs.auth import DEFAULT_ACCESS_KEY, DEFAULT_SECRET_KEY
from majob.emulator.obs.faults import FaultRule
from majob.emulator.obs.server import FakeObsServer


def parse_credentials(items: list[str]) -> dict[str, str]:
    """``AK:SK`` pairs; none means the documented test pair."""
    if not items:
        return {DEFAULT_ACCESS_KEY: DEFAULT_SECRET_KEY}
    pairs = {}
    for item in items:
        access_key, sep, secret_key = item.partition(":")
        if not sep or not access_key or not secret_key:
            raise SystemExit(f"error: --credential wants AK:SK, got {item.split(':')[0]!r}:...")
        pairs[access_key] = secret_key
    return pairs


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m majob.emulator.obs", description=__doc__)
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--data", type=Path, help="persist here (default: memory)")
    parser.add_argument("--region", default="cn-north-4")
    parser.add_argument("--bucket", action="append", default=[], help="create this bucket")
    parser.add_argument("--credential", action="append", default=[], metavar="AK:SK")
    parser.add_argument("--no-auth", action="store_true", help="accept any signature")
    parser.add_argument("--faults", type=Path, help="JSON list of fault rules")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    serve(
        port=args.port,
        data_dir=args.data,
        region=args.region,
        buckets=args.bucket,
        credentials={} if args.no_auth else parse_credentials(args.credential),
        faults=json.loads(args.faults.read_text(encoding="utf-8")) if args.faults else [],
        seed=args.seed,
    )
    return 0


def serve(
    *,
    port: int,
    data_dir: Path | None,
    region: str,
    buckets: list[str],
    credentials: dict[str, str],
    faults: list[dict[str, object]],
    seed: int,
) -> None:
    """Run until SIGTERM or Ctrl-C; the first stdout line is the endpoint."""
    server = FakeObsServer(
        port=port, data_dir=data_dir, credentials=credentials, region=region, seed=seed
    )
    for name in buckets:
        if name not in server.backend.buckets:
            server.backend.create_bucket(name)
    for rule in faults:
        server.faults.add(FaultRule.from_dict(rule))
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    sys.stdout.write(server.endpoint + "\n")
    sys.stdout.flush()
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


if __name__ == "__main__":
    sys.exit(main())

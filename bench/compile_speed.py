"""Compile speed, side by side with the official SDK's own request models.

For each golden spec (tests/golden/compile/specs), times per call, in-process:

- ``majob rest``: ``to_rest_body(spec, stage)`` from a loaded ``JobSpec``;
- ``majob sdk``: ``to_estimator(spec, stage)`` plus ``to_json()`` and ``to_python()``;
- ``sdk models``: the same body turned into ``huaweicloudsdkmodelarts``'s
  ``CreateTrainingJobRequest`` and serialised back (what the official client does to a body
  before sending it), the peer.

Rounds are interleaved; the median per call is printed with majob's ratio to the peer.

    .venv/bin/python bench/compile_speed.py [--rounds 15] [--calls 200]
"""

from __future__ import annotations

import argparse
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from majob.compile import to_estimator, to_rest_body
from majob.spec.load import load_spec
from majob.spec.profiles import Profile

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "tests" / "golden" / "compile" / "specs"


def _per_call(fn: Callable[[], Any], calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - start) / calls


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()

    from huaweicloudsdkcore.utils.http_utils import sanitize_for_serialization
    from huaweicloudsdkmodelarts.v1 import ModelArtsClient

    client = ModelArtsClient()
    print(f"{'spec':<16} {'majob rest':>11} {'majob sdk':>11} {'sdk models':>11} {'rest/peer':>10}")
    for path in sorted(SPECS.glob("*.yaml")):
        spec = load_spec(path, profile=Profile(), environ={}, check_files=False)
        body = to_rest_body(spec, "debug")

        def rest(spec: Any = spec) -> object:
            return to_rest_body(spec, "debug")

        def sdk(spec: Any = spec) -> object:
            call = to_estimator(spec, "debug")
            return call.to_json(), call.to_python()

        def peer(body: dict[str, Any] = body) -> object:
            request = client._deserialize(body, "CreateTrainingJobRequest")
            return sanitize_for_serialization(request.body)

        times: dict[str, list[float]] = {"rest": [], "sdk": [], "peer": []}
        for _ in range(args.rounds):
            for name, fn in (("rest", rest), ("sdk", sdk), ("peer", peer)):
                times[name].append(_per_call(fn, args.calls))
        med = {k: statistics.median(v) * 1e6 for k, v in times.items()}
        print(
            f"{path.stem:<16} {med['rest']:>9.1f}us {med['sdk']:>9.1f}us {med['peer']:>9.1f}us"
            f" {med['rest'] / med['peer']:>9.2f}x"
        )


if __name__ == "__main__":
    main()

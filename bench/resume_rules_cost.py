"""What the resume rules (MA401-MA403) cost `majob check`: the generated corpus of
bench/check_speed.py checked in this process (-j 1, --target npu) with the resume collector and
rules on, and with both turned into no-ops, in interleaved rounds; median CPU time of each.

    .venv/bin/python bench/resume_rules_cost.py [--rounds 5] [--lines 100000]
"""

from __future__ import annotations

import argparse
import importlib.util
import tempfile
import time
from pathlib import Path

from majob.migrate import checker
from majob.migrate.facts import resume as facts_resume
from majob.migrate.rules import Target

ROOT = Path(__file__).resolve().parent


def _generator():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("check_speed", ROOT / "check_speed.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.generate


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--lines", type=int, default=100_000)
    args = parser.parse_args()
    hook, rules = facts_resume.ResumeFacts._resume_call, checker.check_resume
    with tempfile.TemporaryDirectory() as tmp:
        files, lines = _generator()(Path(tmp), args.lines, 0)
        times: dict[str, list[float]] = {"off": [], "on": []}
        found = 0
        for _ in range(args.rounds):
            for mode in ("off", "on"):
                on = mode == "on"
                facts_resume.ResumeFacts._resume_call = hook if on else lambda *_: None  # type: ignore[method-assign]
                checker.check_resume = rules if on else lambda *_, **__: None  # type: ignore[assignment]
                start = time.process_time()
                reports = checker.check_paths([Path(tmp)], Target.NPU, jobs=1)
                times[mode].append(time.process_time() - start)
                if on:
                    found = sum(f.rule.startswith("MA4") for r in reports for f in r.findings)
    median = {mode: sorted(values)[len(values) // 2] for mode, values in times.items()}
    print(f"corpus: {files} files, {lines} lines; {args.rounds} rounds, median CPU time")
    print(f"resume rules off  {median['off']:.2f} s")
    print(f"resume rules on   {median['on']:.2f} s   ({median['on'] / median['off']:.3f}x)")
    print(f"MA401-MA403 findings: {found}")


if __name__ == "__main__":
    main()

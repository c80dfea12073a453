"""Recall and precision of `majob check --target npu` per rule on the labelled corpus.

    .venv/bin/python bench/migrate_quality.py [--corpus tests/migrate_corpus] [-v]

Each corpus script labels its problems with `# expect: RULE` comments; -v lists every miss and
every false alarm. The errors on the control scripts (device-agnostic code) are listed apart.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from majob.migrate.quality import score

ROOT = Path(__file__).resolve().parents[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "migrate_corpus")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    scores = score(args.corpus)
    print(f"corpus: {scores.files} scripts in {args.corpus}")
    print(f"{'rule':6} {'found':>5} {'missed':>6} {'false':>5} {'recall':>7} {'precision':>9}")
    for rule in scores.rules():
        hit = scores.true_pos.get(rule, 0)
        missed, wrong = scores.false_neg.get(rule, []), scores.false_pos.get(rule, [])
        print(
            f"{rule:6} {hit:5} {len(missed):6} {len(wrong):5} "
            f"{scores.recall(rule):7.2f} {scores.precision(rule):9.2f}"
        )
        if args.verbose:
            for name, line, _ in missed:
                print(f"    missed {name}:{line}")
            for name, line, _ in wrong:
                print(f"    false  {name}:{line}")
    total_hit = sum(scores.true_pos.values())
    total_missed = sum(len(v) for v in scores.false_neg.values())
    total_wrong = sum(len(v) for v in scores.false_pos.values())
    print(
        f"all    {total_hit:5} {total_missed:6} {total_wrong:5} "
        f"{total_hit / max(1, total_hit + total_missed):7.2f} "
        f"{total_hit / max(1, total_hit + total_wrong):9.2f}"
    )
    print(f"errors on the controls: {len(scores.control_errors)}")
    for name, line, rule in scores.control_errors:
        print(f"    {name}:{line} {rule}")


if __name__ == "__main__":
    main()

"""Recall and precision of `majob check --target npu` on the labelled corpus: per rule, per
category (PATH_DATA, PATH_OUTPUT, ARGUMENTS, DISTRIBUTED, NPU, PARSE), per class of script the
labels name (@positional, @local-var, ...), and overall.

    .venv/bin/python bench/migrate_quality.py [--corpus tests/migrate_corpus] [-v]

Each corpus script labels its problems with `# expect: RULE [@class]` comments and the fine
look-alikes with `# clean: @class`; -v lists every miss and every false alarm. The errors on the
control scripts (device-agnostic code) are listed apart.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from majob.migrate.quality import Scores, Tally, score

ROOT = Path(__file__).resolve().parents[1]


def _row(name: str, tally: Tally, verbose: bool) -> None:
    print(
        f"{name:14} {tally.found:5} {len(tally.missed):6} {len(tally.false):5} "
        f"{tally.recall:7.2f} {tally.precision:9.2f}"
    )
    if verbose:
        for file, line, rule in tally.missed:
            print(f"    missed {file}:{line} {rule}")
        for file, line, rule in tally.false:
            print(f"    false  {file}:{line} {rule}")


def _table(title: str, groups: dict[str, Tally], verbose: bool) -> None:
    print(f"\n{title:14} {'found':>5} {'missed':>6} {'false':>5} {'recall':>7} {'precision':>9}")
    for name in sorted(groups):
        _row(name, groups[name], verbose)


def report(scores: Scores, verbose: bool) -> None:
    _table("rule", scores.by_rule, verbose)
    _table("category", scores.by_category, False)
    _table("class", scores.by_class, verbose)
    print()
    _row("all", scores.total(), False)
    print(f"errors on the controls: {len(scores.control_errors)}")
    for name, line, rule in scores.control_errors:
        print(f"    {name}:{line} {rule}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--corpus", type=Path, default=ROOT / "tests" / "migrate_corpus")
    parser.add_argument("-v", "--verbose", action="store_true")
    args = parser.parse_args()
    scores = score(args.corpus)
    print(f"corpus: {scores.files} scripts in {args.corpus}")
    report(scores, args.verbose)


if __name__ == "__main__":
    main()

"""Score ``majob check`` against a labelled corpus: recall and precision per rule.

A corpus file labels its problems with a trailing ``# expect: MA101, MA305`` comment on the line
the finding belongs to. Findings are compared as (file, line, rule); notes are not scored (they
are advice, not problems). A file whose docstring starts with ``Control:`` must get no error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from majob.migrate.checker import check_source
from majob.migrate.rules import Severity, Target

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+)$")

Key = tuple[str, int, str]


def labels(source: str, name: str) -> set[Key]:
    """The (file, line, rule) labels of one corpus file."""
    found: set[Key] = set()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for rule in match.group(1).split(","):
                if rule.strip():
                    found.add((name, number, rule.strip()))
    return found


@dataclass
class Scores:
    """Counts per rule over a corpus, and the errors reported on the controls."""

    true_pos: dict[str, int] = field(default_factory=dict)
    false_pos: dict[str, list[Key]] = field(default_factory=dict)
    false_neg: dict[str, list[Key]] = field(default_factory=dict)
    control_errors: list[Key] = field(default_factory=list)
    files: int = 0

    def rules(self) -> list[str]:
        return sorted({*self.true_pos, *self.false_pos, *self.false_neg})

    def recall(self, rule: str) -> float:
        hit, missed = self.true_pos.get(rule, 0), len(self.false_neg.get(rule, []))
        return hit / (hit + missed) if hit + missed else 1.0

    def precision(self, rule: str) -> float:
        hit, wrong = self.true_pos.get(rule, 0), len(self.false_pos.get(rule, []))
        return hit / (hit + wrong) if hit + wrong else 1.0


def score(corpus: Path, target: Target = Target.NPU) -> Scores:
    """Check every ``*.py`` file of ``corpus`` and compare with its labels."""
    scores = Scores()
    for path in sorted(corpus.glob("*.py")):
        scores.files += 1
        source = path.read_text(encoding="utf-8")
        expected = labels(source, path.name)
        report = check_source(source, path.name, target)
        got = {
            (path.name, f.line, f.rule) for f in report.findings if f.severity >= Severity.WARNING
        }
        if '"""Control:' in source.split("\n", 1)[0]:
            scores.control_errors += sorted(
                (path.name, f.line, f.rule) for f in report.findings if f.severity >= Severity.ERROR
            )
        for key in got & expected:
            scores.true_pos[key[2]] = scores.true_pos.get(key[2], 0) + 1
        for key in sorted(got - expected):
            scores.false_pos.setdefault(key[2], []).append(key)
        for key in sorted(expected - got):
            scores.false_neg.setdefault(key[2], []).append(key)
    return scores

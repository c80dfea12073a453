"""Score ``majob check`` against a labelled corpus: recall and precision per rule, per category of
rule (``PATH_DATA``, ``PATH_OUTPUT``, ...) and per class of script the labels name.

A corpus file labels its problems with a trailing ``# expect: MA101, MA305`` comment on the line
the finding belongs to; ``# expect: MA101 @positional`` also names the class of problem the line
is an example of, and ``# clean: @false-alarm`` marks a line that must get no finding (a look-alike
that is fine). Findings are compared as (file, line, rule); notes are not scored (they are advice,
not problems). A file whose docstring starts with ``Control:`` must get no error. A directory of
the corpus is one project, checked as a whole (its files see each other's helpers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from majob.migrate.checker import check_paths, check_source
from majob.migrate.findings import FileReport
from majob.migrate.rules import Severity, Target

_EXPECT = re.compile(r"#\s*expect:\s*([A-Z0-9, ]+?)\s*(?:@([a-z0-9-]+))?\s*$")
_CLEAN = re.compile(r"#\s*clean:\s*@([a-z0-9-]+)\s*$")
# `# checkpoints: train_url/ckpt/`: checked as with a spec whose fault_tolerance says so
_CHECKPOINTS = re.compile(r"^#\s*checkpoints:\s*(\S+?)/(\S*?)/?\s*$", re.MULTILINE)

Key = tuple[str, int, str]

# The categories the rules are scored in besides one by one (what a path is, what a script needs).
CATEGORIES: dict[str, str] = {
    "MA000": "PARSE",
    "MA101": "PATH_DATA",
    "MA108": "PATH_DATA",
    "MA102": "PATH_OUTPUT",
    "MA105": "PATH_OUTPUT",
    "MA103": "ARGUMENTS",
    "MA104": "ARGUMENTS",
    "MA106": "ARGUMENTS",
    "MA107": "ARGUMENTS",
}


def category(rule: str) -> str:
    """The category ``rule`` is scored in: the table above, else ``DISTRIBUTED``, ``NPU`` or
    ``RESUME`` by its range."""
    families = {"MA2": "DISTRIBUTED", "MA3": "NPU", "MA4": "RESUME"}
    return CATEGORIES.get(rule) or families.get(rule[:3], "NPU")


@dataclass
class Labels:
    """What one corpus file expects: (file, line, rule) keys, the class of each labelled line, and
    the lines that must stay clean."""

    expected: set[Key] = field(default_factory=set)
    classes: dict[int, str] = field(default_factory=dict)
    clean: dict[int, str] = field(default_factory=dict)


def labels(source: str, name: str) -> Labels:
    """The labels of one corpus file."""
    found = Labels()
    for number, line in enumerate(source.splitlines(), start=1):
        match = _EXPECT.search(line)
        if match:
            for rule in match.group(1).split(","):
                if rule.strip():
                    found.expected.add((name, number, rule.strip()))
            if match.group(2):
                found.classes[number] = match.group(2)
        clean = _CLEAN.search(line)
        if clean:
            found.clean[number] = clean.group(1)
    return found


@dataclass
class Tally:
    """Found, missed and false counts of one group (a rule, a category or a class)."""

    found: int = 0
    missed: list[Key] = field(default_factory=list)
    false: list[Key] = field(default_factory=list)

    @property
    def recall(self) -> float:
        total = self.found + len(self.missed)
        return self.found / total if total else 1.0

    @property
    def precision(self) -> float:
        total = self.found + len(self.false)
        return self.found / total if total else 1.0


@dataclass
class Scores:
    """Counts per rule, per category and per labelled class over a corpus, and the errors
    reported on the controls."""

    by_rule: dict[str, Tally] = field(default_factory=dict)
    by_category: dict[str, Tally] = field(default_factory=dict)
    by_class: dict[str, Tally] = field(default_factory=dict)
    control_errors: list[Key] = field(default_factory=list)
    files: int = 0

    def rules(self) -> list[str]:
        return sorted(self.by_rule)

    def recall(self, rule: str) -> float:
        return self.by_rule[rule].recall if rule in self.by_rule else 1.0

    def precision(self, rule: str) -> float:
        return self.by_rule[rule].precision if rule in self.by_rule else 1.0

    def total(self) -> Tally:
        overall = Tally()
        for tally in self.by_rule.values():
            overall.found += tally.found
            overall.missed += tally.missed
            overall.false += tally.false
        return overall

    def _groups(self, key: Key, tag: str | None) -> list[Tally]:
        groups = [
            self.by_rule.setdefault(key[2], Tally()),
            self.by_category.setdefault(category(key[2]), Tally()),
        ]
        if tag:
            groups.append(self.by_class.setdefault(tag, Tally()))
        return groups

    def add(self, report: FileReport, name: str, source: str) -> None:
        """Score the findings of one file against its labels."""
        self.files += 1
        expected = labels(source, name)
        scored = [f for f in report.findings if f.severity >= Severity.WARNING]
        got = {(name, f.line, f.rule) for f in scored}
        if '"""Control:' in source.split("\n", 1)[0]:
            self.control_errors += sorted(
                (name, f.line, f.rule) for f in report.findings if f.severity >= Severity.ERROR
            )
        for key in sorted(got & expected.expected):
            for tally in self._groups(key, expected.classes.get(key[1])):
                tally.found += 1
        for key in sorted(got - expected.expected):
            for tally in self._groups(key, expected.clean.get(key[1])):
                tally.false.append(key)
        for key in sorted(expected.expected - got):
            for tally in self._groups(key, expected.classes.get(key[1])):
                tally.missed.append(key)
        for tag in expected.clean.values():
            self.by_class.setdefault(tag, Tally())


def score(corpus: Path, target: Target = Target.NPU) -> Scores:
    """Check every ``*.py`` file of ``corpus`` (and every project directory in it, as a whole)
    and compare with its labels."""
    scores = Scores()
    for path in sorted(corpus.glob("*.py")):
        source = path.read_text(encoding="utf-8")
        found = _CHECKPOINTS.search(source)
        checkpoints = (found.group(1), found.group(2)) if found else None
        report = check_source(source, path.name, target, checkpoints=checkpoints)
        scores.add(report, path.name, source)
    for project in sorted(p for p in corpus.iterdir() if p.is_dir() and not p.name.startswith(".")):
        for report in check_paths([project], target, jobs=1):
            name = Path(report.path).relative_to(corpus).as_posix()
            source = (corpus / name).read_text(encoding="utf-8")
            report.path = name
            scores.add(report, name, source)
    return scores

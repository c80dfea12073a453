"""Findings (what ``majob check`` reports) and fixes (what ``majob migrate`` applies).

The checker produces both from one pass over a file: a finding is auto-fixable exactly when the
checker also planned a ``Fix`` for it, and the codemods do nothing but apply planned fixes. That is
what makes ``check`` after ``migrate`` report nothing fixable, and a second ``migrate`` a no-op.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from majob.migrate.rules import RULES, Codemod, Severity, Target, rule_severity

# The records of the check that are not changed once made (here, in ``rules``, ``patterns``,
# ``facts.records``) are named tuples, not dataclasses: on Python 3.11 a dataclass compiles each
# generated method (ten for an ordered frozen one) when its module is imported, and a frozen one
# sets every field through ``object.__setattr__``. Measured with callgrind, that was a tenth of
# the instructions of ``majob check FILE`` on a small file. (A position is called ``position``:
# a field called ``index`` would hide ``tuple.index``.)


class Span(NamedTuple):
    """A node's place in the source: 1-based lines, 0-based character columns (end exclusive)."""

    line: int
    col: int
    end_line: int
    end_col: int

    def contains(self, other: Span) -> bool:
        """Whether ``other`` lies within this span (or is it)."""
        return (self.line, self.col) <= (other.line, other.col) and (
            other.end_line,
            other.end_col,
        ) <= (self.end_line, self.end_col)


class Finding(NamedTuple):
    """One problem at ``path:line:col`` (both 1-based)."""

    path: str
    line: int
    col: int
    rule: str
    severity: Severity
    message: str
    fixed_by: tuple[Codemod, ...] = ()

    @property
    def hint(self) -> str:
        return RULES[self.rule].hint

    @property
    def name(self) -> str:
        return RULES[self.rule].name

    @property
    def fixable(self) -> bool:
        return bool(self.fixed_by)

    def sort_key(self) -> tuple[str, int, int, str]:
        return (self.path, self.line, self.col, self.rule)

    def to_dict(self) -> dict[str, object]:
        return {
            "path": self.path,
            "line": self.line,
            "col": self.col,
            "rule": self.rule,
            "name": self.name,
            "severity": self.severity.label,
            "message": self.message,
            "hint": self.hint,
            "fixable": self.fixable,
            "fixed_by": [c.value for c in self.fixed_by],
        }


class Fix(NamedTuple):
    """One edit a codemod applies at ``span``. ``action`` says what; ``code`` is new source text.

    Actions: ``replace-expr`` (the expression at span becomes ``code``), ``replace-string``
    (the string literal's text ``old`` becomes ``new``, quotes kept), ``rename-attr`` (the
    attribute or method name becomes ``code``), ``parse-known-args``, ``set-kwarg`` (keyword
    ``name`` of the call at span becomes ``code``), ``insert-before`` / ``insert-after`` (statements
    around the statement line containing span; ``insert-before`` also before a ``for`` starting
    on span's line), ``replace-stmt``, ``wrap-stmt`` (``if code:``
    around it), ``prepend-body`` (statements at the top of the compound statement at span),
    ``prepend-function`` (statements at the top of the body of the function defined on span's
    line, after its docstring),
    ``insert-top`` (after the module docstring and ``__future__`` imports).
    """

    codemod: Codemod
    rule: str
    action: str
    span: Span
    code: str = ""
    name: str = ""
    old: str = ""
    new: str = ""


@dataclass
class FileReport:
    """The result of checking one file."""

    path: str
    findings: list[Finding] = field(default_factory=list)
    fixes: list[Fix] = field(default_factory=list)
    parsed: bool = True
    top_level: list[tuple[int, int]] | None = None  # the top-level statements' line ranges
    # a file that parses once its syntax errors are fixed (Python 2 era `async=`): the fixed text
    repaired_source: str | None = None
    # what the file's functions do with their parameters, for the files that call them
    # (function -> positional params, keyword-only params, {param: "input"/"output"})
    exports: dict[str, tuple[list[str], list[str], dict[str, str]]] = field(default_factory=dict)
    imported: list[str] = field(default_factory=list)  # imported helpers handed a literal
    per_epoch_saves: int = 0  # checkpoint saves that run every epoch (or every few steps)

    def fixes_for(self, codemod: Codemod) -> list[Fix]:
        return [f for f in self.fixes if f.codemod is codemod]


class FileFindings:
    """What the rules report for one file, in the order they report it."""

    def __init__(self, path: str, target: Target) -> None:
        self.path = path
        self.target = target
        self.findings: list[Finding] = []
        self.fixes: list[Fix] = []

    def report(
        self, rule: str, span: Span, detail: str = "", *fixes: Fix, severity: Severity | None = None
    ) -> None:
        """A finding of ``rule`` at ``span``, auto-fixable by the codemods of ``fixes``.

        ``severity`` overrides the rule's own (a rule whose weight depends on the file)."""
        message = RULES[rule].summary + (f": {detail}" if detail else "")
        fixed_by = tuple(dict.fromkeys(f.codemod for f in fixes))
        self.findings.append(
            Finding(
                self.path,
                span.line,
                span.col + 1,
                rule,
                severity or rule_severity(rule, self.target),
                message,
                fixed_by,
            )
        )
        self.fixes.extend(fixes)

    def file_report(self) -> FileReport:
        """The findings in report order and each distinct fix once, first planned first."""
        self.findings.sort(key=Finding.sort_key)
        return FileReport(self.path, self.findings, list(dict.fromkeys(self.fixes)))

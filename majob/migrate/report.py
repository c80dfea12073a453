"""How ``majob check`` prints its findings: text for people, JSON and SARIF 2.1.0 for tools."""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Sequence
from json.encoder import encode_basestring_ascii as _text  # json.dumps' own, for one string
from pathlib import Path, PurePath
from urllib.parse import quote

from majob.migrate.findings import FileReport, Finding
from majob.migrate.rules import RULES
from majob.text import counted

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
_SARIF_LEVEL = {"note": "note", "warning": "warning", "error": "error"}


def all_findings(reports: Sequence[FileReport]) -> list[Finding]:
    return sorted((f for r in reports for f in r.findings), key=Finding.sort_key)


def render_text(reports: Sequence[FileReport]) -> str:
    """``path:line:col: RULE severity: message`` lines, each with its hint, then a summary."""
    findings = all_findings(reports)
    lines = []
    for f in findings:
        fix = (
            f" [fix: majob migrate --to {'|'.join(c.value for c in f.fixed_by)}]"
            if f.fixable
            else ""
        )
        lines.append(f"{f.path}:{f.line}:{f.col}: {f.rule} {f.severity.label}: {f.message}{fix}")
        lines.append(f"    hint: {f.hint}")
    counts = Counter(f.severity.label for f in findings)
    fixable = sum(1 for f in findings if f.fixable)
    broken = sum(1 for r in reports if not r.parsed)  # checked around their syntax errors
    summary = f"{counted(len(reports), 'file')} checked, {counted(len(findings), 'finding')}"
    if findings:
        parts = [counted(counts[s], s) for s in ("error", "warning", "note") if counts[s]]
        summary += f" ({', '.join(parts)}; {fixable} auto-fixable)"
    if broken:
        summary += f", {counted(broken, 'file')} with syntax errors (MA000)"
    lines.append(summary)
    return "\n".join(lines) + "\n"


def render_json(reports: Sequence[FileReport]) -> str:
    """One JSON document: the findings and the per-file parse status, one record per line
    (readable and greppable; and the C encoder, which ``indent`` would turn off: a 100,000-line
    tree has about 10,000 findings)."""
    files = [json.dumps({"path": r.path, "parsed": r.parsed}) for r in reports]
    rules: dict[str, tuple[str, str]] = {}
    findings = [_finding_json(f, rules) for f in all_findings(reports)]
    return f'{{\n  "files": {_json_lines(files)},\n  "findings": {_json_lines(findings)}\n}}\n'


def _finding_json(finding: Finding, rules: dict[str, tuple[str, str]]) -> str:
    """``json.dumps(finding.to_dict())``, the same text at a fraction of the cost: what a rule
    says is encoded once per rule (kept in ``rules``), the rest per finding."""
    said = rules.get(finding.rule)
    if said is None:
        said = rules[finding.rule] = (
            f'"rule": {_text(finding.rule)}, "name": {_text(finding.name)}',
            _text(finding.hint),
        )
    named, hint = said
    fixed_by = json.dumps([c.value for c in finding.fixed_by])
    return (
        f'{{"path": {_text(finding.path)}, "line": {finding.line}, "col": {finding.col}, '
        f'{named}, "severity": {_text(finding.severity.label)}, '
        f'"message": {_text(finding.message)}, "hint": {hint}, '
        f'"fixable": {"true" if finding.fixable else "false"}, "fixed_by": {fixed_by}}}'
    )


def _json_lines(records: list[str]) -> str:
    if not records:
        return "[]"
    return "[\n    " + ",\n    ".join(records) + "\n  ]"


def _uri(path: str) -> str:
    """A SARIF artifact URI: ``file:///...`` for an absolute path, else a relative reference."""
    pure = PurePath(path)
    if pure.is_absolute():
        return Path(pure).as_uri()
    return quote(pure.as_posix())


def render_sarif(reports: Sequence[FileReport], tool_version: str) -> str:
    """A SARIF 2.1.0 log with one run; rules carry their id, name, text and default level."""
    used = sorted({f.rule for r in reports for f in r.findings})
    rule_index = {rule_id: i for i, rule_id in enumerate(used)}
    rules = [
        {
            "id": rule_id,
            "name": RULES[rule_id].name,
            "shortDescription": {"text": RULES[rule_id].summary},
            "help": {"text": RULES[rule_id].hint},
            "defaultConfiguration": {"level": _SARIF_LEVEL[RULES[rule_id].severity.label]},
        }
        for rule_id in used
    ]
    results = [
        {
            "ruleId": f.rule,
            "ruleIndex": rule_index[f.rule],
            "level": _SARIF_LEVEL[f.severity.label],
            "message": {"text": f"{f.message}. Hint: {f.hint}"},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _uri(f.path)},
                        "region": {"startLine": f.line, "startColumn": f.col},
                    }
                }
            ],
            "properties": {"fixable": f.fixable, "fixedBy": [c.value for c in f.fixed_by]},
        }
        for f in all_findings(reports)
    ]
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "majob",
                        "version": tool_version,
                        "rules": rules,
                    }
                },
                "results": results,
            }
        ],
    }
    return json.dumps(log, indent=2) + "\n"

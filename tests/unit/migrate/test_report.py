"""Text, JSON and SARIF 2.1.0 renderings of the same findings."""

from __future__ import annotations

import json

from majob.migrate.checker import check_source
from majob.migrate.findings import FileReport
from majob.migrate.report import render_json, render_sarif, render_text
from majob.migrate.rules import RULES, Target

SOURCE = "import torch\nm = torch.nn.DataParallel(net)\nx = y.cuda()\n"


def _reports() -> list[FileReport]:
    return [check_source(SOURCE, "pkg/train.py", Target.NPU), check_source("x = (\n", "bad.py")]


def test_text_lists_location_rule_fix_and_summary() -> None:
    text = render_text(_reports())
    assert "pkg/train.py:2:5: MA201 error: DataParallel" in text
    assert (
        "pkg/train.py:3:5: MA303 error: a .cuda() call without transfer_to_npu [fix: majob "
        "migrate --to npu-manual|npu-auto]" in text
    )
    assert "    hint: use DistributedDataParallel" in text
    assert text.splitlines()[-1] == (
        "2 files checked, 4 findings (4 errors; 2 auto-fixable), 1 file with syntax errors (MA000)"
    )


def test_the_summary_counts_each_severity_with_its_plural() -> None:
    one = "import torch\nm = torch.nn.DataParallel(net)\n"
    summary = render_text([check_source(one, "a.py")]).splitlines()[-1]
    assert summary == "1 file checked, 1 finding (1 warning; 0 auto-fixable)"
    many = render_text(_reports()).splitlines()[-1]
    assert "4 errors" in many and "4 error;" not in many


def test_json_has_files_and_findings() -> None:
    document = json.loads(render_json(_reports()))
    assert document["files"] == [
        {"path": "pkg/train.py", "parsed": True},
        {"path": "bad.py", "parsed": False},
    ]
    first = document["findings"][0]
    assert set(first) == {
        "path", "line", "col", "rule", "name", "severity", "message", "hint", "fixable", "fixed_by",
    }  # fmt: skip
    assert {f["rule"] for f in document["findings"]} >= {"MA000", "MA201", "MA303", "MA305"}


def test_each_json_record_is_json_dumps_of_its_finding() -> None:
    """The records are assembled from pieces encoded once per rule: the text must still be what
    ``json.dumps`` makes of each finding, odd characters in paths and messages included."""
    odd = 'import torch\nopen("d\u00e9j\u00e0/{x}\\"q\\".csv").read()\nx = y.cuda()\n'
    reports = [
        *_reports(),
        check_source(odd, 'caf\u00e9/\u65e5\u672c/t"r\\ain {1}.py', Target.NPU),
    ]
    findings = [f for report in reports for f in report.findings]
    findings.sort(key=lambda f: f.sort_key())
    text = render_json(reports)
    records = text.split('"findings": [\n    ', 1)[1].rsplit("\n  ]", 1)[0].split(",\n    ")
    assert records == [json.dumps(f.to_dict()) for f in findings]
    assert len({f.rule for f in findings}) > 3 and any(not f.fixed_by for f in findings)


def test_sarif_has_the_2_1_0_shape() -> None:
    log = json.loads(render_sarif(_reports(), "1.2.3"))
    assert log["version"] == "2.1.0"
    assert log["$schema"].endswith("sarif-2.1.0.json")
    (run,) = log["runs"]
    driver = run["tool"]["driver"]
    assert (driver["name"], driver["version"]) == ("majob", "1.2.3")
    rule_ids = [r["id"] for r in driver["rules"]]
    assert rule_ids == sorted(rule_ids)
    for rule in driver["rules"]:
        assert rule["shortDescription"]["text"] == RULES[rule["id"]].summary
        assert rule["defaultConfiguration"]["level"] in {"note", "warning", "error"}
    for result in run["results"]:
        assert driver["rules"][result["ruleIndex"]]["id"] == result["ruleId"]
        assert result["level"] in {"note", "warning", "error"}
        assert result["message"]["text"]
        (location,) = result["locations"]
        region = location["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
        assert location["physicalLocation"]["artifactLocation"]["uri"] in {"pkg/train.py", "bad.py"}


def test_sarif_uris_are_relative_references_or_file_uris() -> None:
    reports = [check_source("x = (\n", "/abs/dir/my file.py"), check_source("x = (\n", "rel/a.py")]
    results = json.loads(render_sarif(reports, "0"))["runs"][0]["results"]
    uris = [r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] for r in results]
    assert uris == ["file:///abs/dir/my%20file.py", "rel/a.py"]

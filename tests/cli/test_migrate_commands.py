"""``majob check`` and ``majob migrate`` through the CLI: exit codes, formats, diffs, backups."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

GPU_SCRIPT = """\
import argparse

import torch


def main():
    parser = argparse.ArgumentParser()
    args = parser.parse_args()
    model = torch.nn.Linear(2, 2).cuda()
    torch.save(model.state_dict(), "./out/model.pt")


main()
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "train.py").write_text(GPU_SCRIPT, encoding="utf-8")
    (tmp_path / "pkg" / "broken.py").write_text("def f(:\n", encoding="utf-8")
    (tmp_path / "pkg" / "notes.txt").write_text("not python", encoding="utf-8")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "site.py").write_text("x = (\n", encoding="utf-8")  # ignored dir
    return tmp_path


def test_check_text_reports_and_fails_on_errors(project: Path) -> None:
    result = runner.invoke(app, ["check", str(project)])
    assert result.exit_code == 1
    lines = result.stdout.splitlines()
    broken = f"{project}/pkg/broken.py:1:7: MA000 error: this part of the file cannot be parsed"
    assert any(line.startswith(broken) for line in lines)
    assert any(line.startswith(f"{project}/pkg/train.py:8:12: MA104 error") for line in lines)
    assert ".venv" not in result.stdout
    assert lines[-1].startswith("2 files checked, ")
    assert lines[-1].endswith("1 file with syntax errors (MA000)")


def test_fail_on_threshold(tmp_path: Path) -> None:
    script = tmp_path / "t.py"
    script.write_text("import os\nos.environ['MASTER_ADDR'] = 'h'\n", encoding="utf-8")
    assert runner.invoke(app, ["check", str(script)]).exit_code == 0  # a warning only
    assert runner.invoke(app, ["check", str(script), "--fail-on", "warning"]).exit_code == 1
    script.write_text("import torch\nx = torch.zeros(1).cuda()\n", encoding="utf-8")
    assert runner.invoke(app, ["check", str(script), "--target", "npu"]).exit_code == 1
    args = ["check", str(script), "--target", "npu", "--fail-on", "never"]
    assert runner.invoke(app, args).exit_code == 0


def test_check_json_and_sarif(project: Path) -> None:
    train = str(project / "pkg" / "train.py")
    result = runner.invoke(app, ["check", train, "--format", "json", "--target", "npu"])
    document = json.loads(result.stdout)
    rules = {f["rule"] for f in document["findings"]}
    assert {"MA102", "MA103", "MA104", "MA303", "MA305"} <= rules
    result = runner.invoke(app, ["check", train, "--format", "sarif"])
    log = json.loads(result.stdout)
    assert log["version"] == "2.1.0"
    assert log["runs"][0]["results"]


def test_missing_path_is_a_user_error(tmp_path: Path) -> None:
    result = runner.invoke(app, ["check", str(tmp_path / "nope.py")])
    assert result.exit_code == 2
    assert result.stderr.startswith(f"error: {tmp_path}/nope.py: no such file or directory\n")


def test_migrate_diff_changes_nothing(project: Path) -> None:
    train = project / "pkg" / "train.py"
    result = runner.invoke(app, ["migrate", str(project / "pkg"), "--to", "npu-manual", "--diff"])
    assert result.exit_code == 0
    assert "-    model = torch.nn.Linear(2, 2).cuda()" in result.stdout
    assert "+    model = torch.nn.Linear(2, 2).npu()" in result.stdout
    assert "+import torch_npu" in result.stdout
    assert train.read_text(encoding="utf-8") == GPU_SCRIPT
    assert "skipped: " in result.stderr and "broken.py" in result.stderr
    assert "npu-manual: 1 of 2 files would change" in result.stderr


def test_migrate_write_keeps_backups_and_is_idempotent(project: Path) -> None:
    train = project / "pkg" / "train.py"
    args = ["migrate", str(train), "--to", "cloud-paths", "--write"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (project / "pkg" / "train.py.orig").read_text(encoding="utf-8") == GPU_SCRIPT
    migrated = train.read_text(encoding="utf-8")
    assert "parse_known_args()" in migrated
    assert 'os.path.join(args.train_url, "model.pt")' in migrated
    again = runner.invoke(app, args)
    assert "0 of 1 file changed" in again.stderr
    assert train.read_text(encoding="utf-8") == migrated
    assert not (project / "pkg" / "train.py.orig.1").exists()
    # a second kind of migration keeps the first backup and adds its own
    assert runner.invoke(app, ["migrate", str(train), "--to", "npu-auto", "--write"]).exit_code == 0
    assert (project / "pkg" / "train.py.orig.1").read_text(encoding="utf-8") == migrated
    check = runner.invoke(app, ["check", str(train), "--format", "json", "--target", "npu"])
    fixed_by = {c for f in json.loads(check.stdout)["findings"] for c in f["fixed_by"]}
    assert not fixed_by & {"cloud-paths", "npu-auto"}


def test_migrate_rejects_diff_and_write_together(project: Path) -> None:
    result = runner.invoke(app, ["migrate", str(project), "--to", "ddp", "--diff", "--write"])
    assert result.exit_code == 2
    assert "--diff and --write exclude each other" in result.stderr


def test_check_imports_neither_libcst_nor_pydantic_and_migrate_libcst(project: Path) -> None:
    def loaded(args: list[str]) -> set[str]:
        code = (
            "import sys\nfrom majob.cli.app import app\n"
            f"try:\n    app({args!r})\nexcept SystemExit:\n    pass\n"
            "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
        )
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
        )
        return set(done.stderr.split())

    train = str(project / "pkg" / "train.py")
    checked = loaded(["check", train])
    assert "majob.migrate.checker" in checked  # the check ran
    # pydantic alone is ~0.1 s of start-up: no spec, no pydantic (Typer < 0.29, see pyproject)
    assert not {"libcst", "pydantic"} & checked
    assert "libcst" in loaded(["migrate", train, "--to", "npu-auto"])


def test_non_utf8_file_is_reported_and_skipped(tmp_path: Path) -> None:
    (tmp_path / "latin.py").write_bytes(b"# caf\xe9\nimport torch\n")
    (tmp_path / "ok.py").write_text("import os\n", encoding="utf-8")
    result = runner.invoke(app, ["check", str(tmp_path), "--format", "json"])
    document = json.loads(result.stdout)
    assert document["files"] == [
        {"path": str(tmp_path / "latin.py"), "parsed": False},
        {"path": str(tmp_path / "ok.py"), "parsed": True},
    ]
    assert [(f["rule"], f["message"]) for f in document["findings"]] == [
        ("MA000", "skipped: the file is not UTF-8 text")
    ]
    migrated = runner.invoke(app, ["migrate", str(tmp_path), "--to", "npu-auto"])
    assert migrated.exit_code == 0
    assert "skipped: " in migrated.stderr and "latin.py: not UTF-8 text" in migrated.stderr

"""The spec's ``precision:`` section, the dump configuration, the HTML report, bad compares."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from majob.cli.precision import _spec_lines
from majob.errors import UserInputError
from majob.precision.compare import CompareReport, compare_runs, to_json
from majob.precision.dumpconfig import prepare
from majob.precision.html import render
from majob.precision.series import compare_series
from majob.precision.sources import RunDump
from majob.spec.load import load_spec
from tests.unit.precision.conftest import spec_file


def test_the_precision_section_becomes_msprobes_config_and_the_nodes_env(tmp_path: Path) -> None:
    extra = "precision: {task: tensor, level: mix, steps: [2], ranks: [0], scope: [Net], seed: 9}\n"
    spec = load_spec(spec_file(tmp_path, extra))
    env = prepare(spec, tmp_path / "out", tmp_path / "config")
    settings = json.loads(Path(env["MAJOB_PRECISION"]).read_text())
    assert settings["level"] == "mix" and settings["step"] == [2] and settings["seed"] == 9
    probe = json.loads(Path(settings["msprobe_config"]).read_text())
    assert probe["task"] == "tensor" and probe["rank"] == [0] and probe["is_deterministic"]
    assert probe["dump_path"] == str(tmp_path / "out" / "precision-dump")
    assert probe["tensor"]["scope"] == ["Net"]
    assert Path(env["MAJOB_PRECISION_BOOTSTRAP"]).name == "bootstrap.py"
    assert env["PYTHONHASHSEED"] == "9"
    kept = json.loads((tmp_path / "out" / "precision-dump" / "run-spec.json").read_text())
    assert kept["precision"]["seed"] == 9 and "stages" not in kept  # for compare's differences


def test_compare_reports_the_spec_fields_that_differ_hyperparameters_first(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LR", "0.02")
    dumps = []
    for name, extra in (
        ("a", "hyperparameters: {lr: 0.01}\n"),
        ("b", "hyperparameters: {lr: '${LR}'}\nenv: {K: v}\n"),
    ):
        where = tmp_path / name
        where.mkdir()
        spec = load_spec(spec_file(where, extra))
        prepare(spec, where / "out", where / "config")
        (where / "out" / "precision-dump" / "loss-rank0.jsonl").write_text(
            '{"step": 0, "loss": 1.0}\n'
        )
        dumps.append(RunDump(name, where / "out" / "precision-dump", where / "out"))
    report = compare_runs(dumps[0], dumps[1], tmp_path / "scratch")
    differences = report.spec_differences
    assert differences is not None
    assert differences[0] == ("hyperparameters.lr", "0.01", "${LR}")  # the reference, not 0.02
    assert ("env.K", "(not set)", "v") in differences
    assert any(field == "code.dir" for field, _, _ in differences)
    shown = to_json(report)["spec_differences"]
    assert isinstance(shown, list)
    assert shown[0] == {"field": "hyperparameters.lr", "golden": "0.01", "target": "${LR}"}
    assert _spec_lines(report)[0] == "spec differs: hyperparameters.lr: A 0.01, B ${LR}"


def test_a_bad_precision_value_is_reported_where_it_was_written(tmp_path: Path) -> None:
    from majob.errors import MajobError

    with pytest.raises(MajobError) as caught:
        load_spec(spec_file(tmp_path, "precision: {task: everything}\n"))
    assert "precision.task" in str(caught.value)


def test_the_report_page_holds_both_curves_and_escapes_names() -> None:
    report = CompareReport(golden="<a>", target="b")
    report.loss = compare_series([2.0, 1.0], [2.0, 1.5], rtol=0.01, atol=0, sources=("x", "y"))
    page = render(report)
    assert page.count("<polyline") == 2 and "&lt;a&gt;" in page and "<a>" not in page
    assert '<span id="verdict" class="fail">fail</span>' in page
    assert "first step beyond: 1" in page


def test_a_crashed_run_whose_every_dump_is_partial_leaves_nothing_to_compare(
    tmp_path: Path,
) -> None:
    sides = []
    for name, content in (("a", '{"data": {"x": {}}}'), ("b", '{"data": {"x"')):
        rank = tmp_path / name / "step0" / "proc1"
        rank.mkdir(parents=True)
        (rank / "dump.json").write_text(content)
        sides.append(RunDump(name, tmp_path / name, tmp_path / name))
    with pytest.raises(UserInputError) as caught:
        compare_runs(sides[0], sides[1], tmp_path / "out")
    assert str(caught.value).startswith("nothing to compare: step 0 proc1: B's dump.json is")


def test_dump_needs_an_output_channel_to_keep_the_dump(tmp_path: Path) -> None:
    from majob.errors import ConfigError
    from majob.precision.dumpconfig import dump_channel

    spec = load_spec(spec_file(tmp_path)).model_copy(update={"outputs": ()})
    with pytest.raises(ConfigError) as caught:
        dump_channel(spec)
    assert str(caught.value) == "p: --dump writes into an output channel and the spec has none"


def test_a_cloud_stage_run_with_dump_points_to_submit(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from majob.cli.app import app

    spec = spec_file(tmp_path)
    result = CliRunner().invoke(app, ["run", str(spec), "--stage", "debug", "--dump"])
    assert result.exit_code == 2, result.output
    assert "--dump with --stage debug" in result.output
    assert f"majob submit {spec} --stage debug --dump --wait" in result.output


def test_a_node_without_msprobe_stops_with_one_line_naming_the_install(tmp_path: Path) -> None:
    import subprocess
    import sys

    from majob.precision.dumpconfig import BOOTSTRAP

    code = (
        "import sys, importlib.util\n"
        "sys.modules['msprobe'] = None  # as if it were not installed\n"
        f"spec = importlib.util.spec_from_file_location('b', {str(BOOTSTRAP)!r})\n"
        "module = importlib.util.module_from_spec(spec)\n"
        "spec.loader.exec_module(module)\n"
        "module._msprobe('unused')\n"
        "print('not reached')\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == (
        f"majob --dump: msprobe is not installed for {sys.executable}; "
        "install it there: pip install mindstudio-probe\n"
    )

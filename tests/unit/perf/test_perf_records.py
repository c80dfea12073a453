"""Perf records: each diagnosis of a spec's code in the ledger, the checklist's "performance
diagnosed" item read from them, ``majob perf`` recording a run it knows the code of, and the
notebook's view of a diagnosis (``majob.perf_report``)."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

import majob
from majob.cli.app import app
from majob.perf.report import diagnose
from majob.pipeline.checklist import checklist
from majob.pipeline.digests import Fingerprint
from majob.pipeline.ledger import Ledger
from majob.pipeline.perf_records import PerfBasis, perf_records, save_perf_record
from majob.pipeline.perf_target import basis_of, write_basis
from majob.spec.load import load_spec

SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
outputs: [{name: train_url, obs: "obs://b-1/out/"}]
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("MAJOB_LEDGER", str(tmp_path / "ledger.db"))
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('v1')\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def _perf_item(project: Path) -> tuple[str, str, str]:
    spec = load_spec(project / "spec.yaml")
    with Ledger(project / "ledger.db") as ledger:
        (item,) = [i for i in checklist(spec, ledger, "spec.yaml") if i.key == "perf"]
    return item.status, item.detail, item.todo


def _basis(project: Path, stage: str = "local") -> PerfBasis:
    fingerprint = Fingerprint.of(load_spec(project / "spec.yaml"))
    return PerfBasis("tiny", stage, fingerprint.spec_digest, fingerprint.code_digest)


def test_the_item_is_done_for_the_code_diagnosed_and_todo_once_it_changes(
    project: Path, plain_profile: Callable[..., Path]
) -> None:
    status, detail, todo = _perf_item(project)
    assert status == "todo" and detail == "no profile of this spec has been diagnosed"
    assert todo == "majob run spec.yaml --perf (or majob pipeline spec.yaml --perf)"
    diagnosis = diagnose("p", plain_profile(data=5000.0), project / "scratch", run_advisor=False)
    with Ledger(project / "ledger.db") as ledger:
        save_perf_record(ledger, _basis(project), diagnosis, source="majob perf", target="run-1")
    status, detail, todo = _perf_item(project)
    assert status == "done" and todo == ""
    assert re.match(
        r"majob perf run-1: local, step p50 [\d.]+ ms, p95 [\d.]+ ms; top finding: ", detail
    )
    assert "% of a step)" in detail
    (project / "code" / "train.py").write_text("print('v2')\n")
    status, detail, todo = _perf_item(project)
    assert status == "todo" and "was of other code: the code changed since" in detail
    assert todo.startswith("majob run spec.yaml --perf")


def test_a_record_keeps_the_slowest_ranks_step_time_and_the_first_findings(
    project: Path, tmp_path: Path, plain_profile: Callable[..., Path]
) -> None:
    plain_profile(data=100.0, rank=0)
    root = plain_profile(data=5000.0, rank=1)
    diagnosis = diagnose("p", root, tmp_path / "scratch", run_advisor=False)
    with Ledger(project / "ledger.db") as ledger:
        save_perf_record(ledger, _basis(project), diagnosis, source="s", target="t")
        (record,) = perf_records(ledger, "tiny")
        assert perf_records(ledger, "tiny", code_digest="other") == []
    slowest = max(diagnosis.ranks, key=lambda r: r.p50)
    assert record.ranks == 2 and record.step_p50_ms == pytest.approx(slowest.p50)
    assert record.findings[0]["title"] == diagnosis.findings[0].title
    assert record.findings[0]["advice"] == diagnosis.findings[0].advice[0]


def test_majob_perf_on_a_run_it_knows_the_code_of_records_it(
    project: Path, plain_profile: Callable[..., Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(project)
    run_dir = plain_profile(data=5000.0)  # the profile's parent stands for the run directory
    write_basis(run_dir, _basis(project))
    assert basis_of(run_dir / "profiling") == _basis(project)
    result = CliRunner().invoke(app, ["perf", str(run_dir / "profiling"), "--no-msprof"])
    assert result.exit_code == 1, result.output  # a finding above 5% of a step
    with Ledger(project / "ledger.db") as ledger:
        (record,) = perf_records(ledger, "tiny")
    assert record.source == "majob perf" and record.target == str(run_dir / "profiling")
    assert _perf_item(project)[0] == "done"


def test_a_profile_of_unknown_code_is_diagnosed_and_not_recorded(
    project: Path, tmp_path: Path, plain_profile: Callable[..., Path]
) -> None:
    root = plain_profile(data=5000.0)
    assert basis_of(root) is None
    result = CliRunner().invoke(app, ["perf", str(root), "--no-msprof"])
    assert result.exit_code == 1, result.output
    with Ledger(project / "ledger.db") as ledger:
        assert perf_records(ledger, "tiny") == []


def test_the_notebook_shows_the_report_in_its_own_scoped_block(
    project: Path, plain_profile: Callable[..., Path]
) -> None:
    report = majob.perf_report(plain_profile(data=5000.0))
    assert isinstance(report, majob.Diagnosis)
    html = report._repr_html_()
    assert html is not None and html.startswith('<div class="majob-perf"><style>')
    assert "<body" not in html and "<html" not in html and 'id="findings"' in html
    assert "body {" not in html  # the page's style would restyle the whole notebook
    assert re.match(r"<Diagnosis .+: 1 rank\(s\), top: .+>$", repr(report))
    assert report.summary().startswith("step time p50 ")
    assert report.findings[0].key == "data_wait"


def test_profiled_steps_far_slower_than_the_run_are_said_not_typical(tmp_path: Path) -> None:
    from .conftest import StepPlan, step_events, write_rank

    plan = StepPlan([("aten::linear", 900.0), ("Optimizer.step#SGD.step", 100.0)])
    # 40 steps of 0.1 ms in the step records; the profiled ones took ~1 ms (a warm-up)
    steps = [(i * 100_000, i * 100_000 + 100_000, 0) for i in range(40)]
    write_rank(tmp_path, step_events([plan] * 3), steps=steps)
    diagnosis = diagnose("p", tmp_path, tmp_path / "scratch", run_advisor=False)
    (note,) = diagnosis.untypical
    assert note.startswith("worker-0-rank0: the profiled steps (0, 1, 2) took ")
    assert "larger perf.skip_first" in note
    assert f"note: {note}" in diagnosis.summary()
    typical = [(i * 1_000_000, i * 1_000_000 + 1_010_000, 0) for i in range(40)]
    write_rank(tmp_path / "b", step_events([plan] * 3), steps=typical)
    assert diagnose("b", tmp_path / "b", tmp_path / "s2", run_advisor=False).untypical == []

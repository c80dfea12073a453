"""Digests, what changed between two fingerprints, and the gates and stage plans."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.pipeline.digests import Fingerprint, changed_fields, changed_files
from majob.pipeline.gate import gate, plan_stages
from majob.pipeline.ledger import Ledger
from majob.spec.digest import spec_digest
from majob.spec.load import load_spec

SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py, obs: "obs://majob-demo/tiny/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
hyperparameters: {lr: 0.1}
stages:
  debug: {hyperparameters: {epochs: 1}}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(tmp_path / "cache"))
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    (tmp_path / "code" / "util.py").write_text("X = 1\n")
    (tmp_path / "code" / "notes.log").write_text("ignored by the upload\n")
    (tmp_path / "code" / ".majobignore").write_text("*.log\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def fingerprint(project: Path, *overrides: str) -> Fingerprint:
    return Fingerprint.of(load_spec(project / "spec.yaml", overrides=overrides))


def test_the_code_digest_covers_exactly_the_uploaded_files(project: Path) -> None:
    first = fingerprint(project)
    assert sorted(first.code_files) == [".majobignore", "train.py", "util.py"]
    (project / "code" / "notes.log").write_text("changed, but not uploaded\n")
    assert fingerprint(project).code_digest == first.code_digest
    (project / "code" / "util.py").write_text("X = 2\n")
    assert fingerprint(project).code_digest != first.code_digest


def test_stage_overrides_do_not_change_the_spec_digest(project: Path) -> None:
    base = load_spec(project / "spec.yaml")
    assert spec_digest(base) == spec_digest(
        load_spec(project / "spec.yaml", overrides=["stages.debug.timeout=5m"])
    )
    assert spec_digest(base) != spec_digest(
        load_spec(project / "spec.yaml", overrides=["hyperparameters.lr=0.2"])
    )


def test_changes_are_named() -> None:
    assert changed_files({"a.py": "1", "b.py": "2"}, {"a.py": "9", "c.py": "3"}) == [
        "a.py (changed)",
        "b.py (removed)",
        "c.py (new)",
    ]
    before = {"hyperparameters": {"lr": 0.1}, "inputs": [{"name": "x", "obs": "a"}], "name": "j"}
    after = {
        "hyperparameters": {"lr": 0.2, "wd": 1},
        "inputs": [{"name": "x", "obs": "b"}],
        "name": "j",
    }
    assert changed_fields(before, after) == [
        "hyperparameters.lr",
        "hyperparameters.wd",
        "inputs[0].obs",
    ]


def record(ledger: Ledger, stage: str, fp: Fingerprint, result: str = "passed") -> int:
    record_id = ledger.start(
        spec_name="tiny",
        stage=stage,
        spec_digest=fp.spec_digest,
        code_digest=fp.code_digest,
        spec_json=fp.spec_json,
        code_files=fp.code_files,
    )
    ledger.finish(record_id, result=result)
    return record_id


def test_gates_open_only_after_the_stage_before_passed_for_this_code_and_spec(
    project: Path,
) -> None:
    ledger = Ledger(project / "ledger.db")
    fp = fingerprint(project)
    assert gate(ledger, "tiny", "local", fp).open
    closed = gate(ledger, "tiny", "debug", fp)
    assert not closed.open and closed.why == "the local stage has not passed for tiny yet"
    record(ledger, "local", fp, "failed")
    assert not gate(ledger, "tiny", "debug", fp).open
    local = record(ledger, "local", fp)
    assert gate(ledger, "tiny", "debug", fp).open
    assert not gate(ledger, "tiny", "formal", fp).open

    (project / "code" / "train.py").write_text("print('hi!')\n")
    changed = fingerprint(project, "hyperparameters.lr=0.5")
    state = gate(ledger, "tiny", "debug", changed)
    assert not state.open
    assert state.why == (
        f"the local stage passed (record #{local}) for other code or spec; changed since: "
        "code: train.py (changed); spec: hyperparameters.lr"
    )


def test_a_plan_skips_what_passed_and_runs_the_rest_in_order(project: Path) -> None:
    ledger = Ledger(project / "ledger.db")
    fp = fingerprint(project)
    plans = plan_stages(ledger, "tiny", fp, start="local", until="formal")
    assert [(p.stage, p.action, p.why) for p in plans] == [
        ("local", "run", "has not passed yet"),
        ("debug", "run", "follows the stage before it"),
        ("formal", "run", "follows the stage before it"),
    ]
    local = record(ledger, "local", fp)
    plans = plan_stages(ledger, "tiny", fp, start="local", until="debug")
    assert [(p.stage, p.action) for p in plans] == [("local", "skip"), ("debug", "run")]
    assert plans[0].why == f"passed for this code and spec (#{local})"
    (project / "code" / "util.py").unlink()
    plans = plan_stages(ledger, "tiny", fingerprint(project), start="local", until="local")
    assert plans[0].why == "changed since it passed: code: util.py (removed)"


def test_a_stage_that_passed_is_skipped_even_when_an_earlier_one_runs(project: Path) -> None:
    # debug passed by `majob submit --stage debug --wait`; local never ran: local runs, debug
    # is not run a second time for the same code and spec.
    ledger = Ledger(project / "ledger.db")
    fp = fingerprint(project)
    debug = record(ledger, "debug", fp)
    plans = plan_stages(ledger, "tiny", fp, start="local", until="formal")
    assert [(p.stage, p.action, p.why) for p in plans] == [
        ("local", "run", "has not passed yet"),
        ("debug", "skip", f"passed for this code and spec (#{debug})"),
        ("formal", "run", "follows the stage before it"),
    ]


def test_a_rotated_token_keeps_the_digest_and_the_ledger_holds_only_the_reference(
    project: Path,
) -> None:
    text = SPEC.replace(
        "hyperparameters: {lr: 0.1}", "hyperparameters: {lr: 0.1, token: '${TOKEN}'}"
    )
    (project / "spec.yaml").write_text(text + "env: {API_TOKEN: 'Bearer ${TOKEN}'}\n")

    def with_token(token: str) -> Fingerprint:
        return Fingerprint.of(load_spec(project / "spec.yaml", environ={"TOKEN": token}))

    ledger = Ledger(project / "ledger.db")
    first = with_token("tok-first-9f2c51")
    record(ledger, "local", first)
    record(ledger, "debug", first)
    assert first.spec_json["hyperparameters"] == {"lr": 0.1, "token": "${TOKEN}"}
    assert first.spec_json["env"] == {"API_TOKEN": "Bearer ${TOKEN}"}
    rotated = with_token("tok-second-7d1e08")
    assert rotated.spec_digest == first.spec_digest
    assert gate(ledger, "tiny", "formal", rotated).open
    ledger.close()
    assert b"tok-first-9f2c51" not in (project / "ledger.db").read_bytes()

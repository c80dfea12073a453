"""Warnings about ``--set`` flags: one a stage's override replaces (the override wins), and a
hyperparameter no ``add_argument`` of the code defines."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.spec.load import load_spec
from majob.spec.set_checks import code_flags, shadowed_sets, undefined_hyperparameters

SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py, obs: "obs://my-bucket/tiny/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u, nodes: 2}
hyperparameters: {epochs: 8, lr: 0.1}
env: {MODE: full}
stages:
  debug: {nodes: 1, hyperparameters: {epochs: 1}, env: {MODE: quick}}
"""
TRAIN = """\
import argparse
from options import more
parser = argparse.ArgumentParser()
parser.add_argument("--epochs", type=int, default=8)
parser.add_argument("--lr", "--learning-rate", type=float, default=0.1)
"""
OPTIONS = """\
def more(parser):
    parser.add_argument("--batch_size", type=int, default=32)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "code" / "pkg").mkdir(parents=True)
    (tmp_path / "code" / "train.py").write_text(TRAIN)
    (tmp_path / "code" / "pkg" / "options.py").write_text(OPTIONS)
    (tmp_path / "code" / "broken.py").write_text("print 'python 2'\n")
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def warnings(project: Path, *sets: str, stages=("debug",)) -> list[str]:
    spec = load_spec(project / "spec.yaml", overrides=sets)
    return shadowed_sets(spec, sets, list(stages)) + undefined_hyperparameters(spec, sets)


def test_a_set_a_stage_override_replaces_is_named_with_the_flag_that_reaches_it(
    project: Path,
) -> None:
    assert warnings(project, "hyperparameters.epochs=3") == [
        "--set hyperparameters.epochs=3: the debug stage runs with "
        "stages.debug.hyperparameters.epochs=1 from the spec (a stage's override wins); to "
        "change it there, --set stages.debug.hyperparameters.epochs=3"
    ]
    assert [w.split(": the")[0] for w in warnings(project, "resources.nodes=4", "env.MODE=x")] == [
        "--set resources.nodes=4",
        "--set env.MODE=x",
    ]
    assert (
        "stages.debug.nodes=1"
        in warnings(project, "resources={nodes: 4, flavor: modelarts.vm.cpu.8u}")[0]
    )
    # Fields no stage overrides, stages without overrides, the stage's own path: no warning.
    assert warnings(project, "hyperparameters.lr=0.2", "resources.flavor=x") == []
    assert warnings(project, "hyperparameters.epochs=3", stages=("local", "formal")) == []
    assert warnings(project, "stages.debug.hyperparameters.epochs=2") == []


def test_a_hyperparameter_no_add_argument_defines_is_named(project: Path) -> None:
    assert code_flags(project / "code", "train.py") == {
        "epochs",
        "lr",
        "learning-rate",
        "batch_size",
    }
    assert warnings(project, "hyperparameters.epoch=2", stages=()) == [
        "--set hyperparameters.epoch=2: no add_argument in train.py or the code beside it "
        "defines --epoch, so parse_args() will stop on --epoch=... (parse_known_args() ignores "
        "it); did you mean 'epochs'?"
    ]
    assert len(warnings(project, "stages.debug.hyperparameters.learning_rate=1", stages=())) == 1
    # Defined in the boot file, in a module beside it, or as written with a dash: no warning.
    assert (
        warnings(project, "hyperparameters.batch_size=8", "hyperparameters.learning-rate=1") == []
    )


def test_code_without_argparse_is_not_judged(project: Path) -> None:
    (project / "code" / "train.py").write_text("import sys\nprint(sys.argv)\n")
    (project / "code" / "pkg" / "options.py").unlink()
    assert warnings(project, "hyperparameters.anything=1", stages=()) == []


def test_the_python_api_warns_with_a_set_warning_at_its_caller(
    project: Path, tmp_path: Path
) -> None:
    from majob import Pipeline, SetWarning

    with pytest.warns(SetWarning) as caught:
        Pipeline(
            project / "spec.yaml",
            overrides=["hyperparameters.epochs=3", "hyperparameters.epoch=2"],
            ledger=tmp_path / "ledger.db",
        )
    messages = [str(w.message) for w in caught]
    assert messages[0].startswith(
        "override hyperparameters.epochs=3: the debug stage runs with "
        "stages.debug.hyperparameters.epochs=1"
    )
    assert messages[0].endswith("override stages.debug.hyperparameters.epochs=3")
    assert any("defines --epoch," in message for message in messages)
    assert {w.filename for w in caught} == {__file__}  # the line that called the API


def test_the_python_api_is_silent_about_overrides_that_do_what_they_say(
    project: Path, tmp_path: Path
) -> None:
    from majob import Pipeline

    # Warnings are errors in the tests: a SetWarning here would fail the test.
    Pipeline(project / "spec.yaml", overrides=["hyperparameters.lr=0.2"], ledger=tmp_path / "l.db")


def test_a_pipeline_told_not_to_warn_reads_no_code_for_it(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from majob import Pipeline
    from majob.spec import set_checks

    read: list[Path] = []
    monkeypatch.setattr(set_checks, "code_flags", lambda *a: read.append(a[0]) or set())
    # The CLI says the warnings itself: the code is not read for them a second time.
    Pipeline(
        project / "spec.yaml",
        overrides=["hyperparameters.epoch=2"],
        ledger=tmp_path / "l.db",
        warn=False,
    )
    assert read == []


def test_a_set_of_a_searched_hyperparameter_is_named_for_a_sweep(project: Path) -> None:
    from majob.spec.set_checks import sweep_set_warnings

    spec_file = project / "spec.yaml"
    spec_file.write_text(
        SPEC.replace("name: tiny", "name: tiny\nmetrics: {loss: 'loss=([0-9.]+)'}")
        + "sweep:\n  space: {lr: {float: [0.001, 0.1]}}\n"
        "  objective: {metric: loss, goal: min}\n"
    )
    sets = (
        "hyperparameters.lr=0.5",
        "stages.formal.hyperparameters.lr=0.2",
        "hyperparameters.epochs=2",
    )
    spec = load_spec(spec_file, overrides=sets)
    lines = sweep_set_warnings(spec, sets, "formal")
    searched = [line for line in lines if "is searched" in line]
    assert searched == [
        "--set hyperparameters.lr=0.5: lr is searched (sweep.space.lr), so every trial runs with "
        "its own sampled value; to fix lr, remove it from sweep.space",
        "--set stages.formal.hyperparameters.lr=0.2: lr is searched (sweep.space.lr), so every "
        "trial runs with its own sampled value; to fix lr, remove it from sweep.space",
    ]
    assert not any("epochs" in line for line in lines)  # formal has no override of its own
    assert sweep_set_warnings(spec, (), "formal") == []

"""A sweep's results without a cloud: the order of the table, the best trial, the spec written
from it, the plot and the notebook's HTML; and a trial's spec."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.spec.load import load_spec
from majob.sweep.results import (
    SweepResult,
    TrialRow,
    importance_of,
    table_html,
    write_best_spec,
)
from majob.sweep.space import trial_spec
from majob.sweep.store import SweepInfo

SPEC = """\
# my comment survives
name: tiny
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
hyperparameters: {lr: 0.1, epochs: 3}
metrics: {loss: 'loss=([0-9.]+)'}
stages:
  debug: {hyperparameters: {lr: 0.5, epochs: 1}}
sweep:
  space:
    lr: {float: [0.001, 1.0], log: true}
  objective: {metric: loss, goal: min}
"""


def row(number: int, state: str, objective: float | None, lr: float) -> TrialRow:
    return TrialRow(
        number, f"tiny-t{number + 1}-debug", f"id{number}", {"lr": lr}, state, "", objective
    )


@pytest.fixture
def spec_file(tmp_path: Path) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("print('loss=1')\n")
    path = tmp_path / "tiny.yaml"
    path.write_text(SPEC)
    return path


def result_of(spec_file: Path, rows: list[TrialRow], goal: str = "min") -> SweepResult:
    info = SweepInfo("tiny-abc123", str(spec_file), "tiny", "debug", 4, 2, None, goal, "loss")
    return SweepResult(info, tuple(rows))


def test_completed_trials_come_first_best_first_then_pruned_running_failed(
    spec_file: Path,
) -> None:
    rows = [
        row(0, "failed", None, 0.9),
        row(1, "completed", 0.5, 0.01),
        row(2, "pruned", 3.0, 0.8),
        row(3, "completed", 0.2, 0.05),
        row(4, "running", 0.7, 0.02),
    ]
    result = result_of(spec_file, rows)
    assert [r.label for r in result.sorted()] == ["t4", "t2", "t3", "t5", "t1"]
    assert result.best is rows[3]
    assert result.summary == (
        "sweep tiny-abc123: 2 completed, 1 pruned, 1 failed, 1 running; best t4 (lr=0.05): loss 0.2"
    )
    assert result_of(spec_file, rows, goal="max").best is rows[1]
    page = table_html(result)
    assert page.index("<td>t4</td>") < page.index("<td>t2</td>") < page.index("<td>t1</td>")


def test_the_best_spec_keeps_the_file_as_written_with_the_best_values(spec_file: Path) -> None:
    result = result_of(spec_file, [row(0, "completed", 0.3, 0.02), row(1, "completed", 0.4, 0.9)])
    written = write_best_spec(result)
    assert written == spec_file.with_name("tiny.best.yaml")
    text = written.read_text()
    assert text.startswith("# The best trial (t1, job id0) of sweep tiny-abc123: loss 0.3\n")
    assert "# my comment survives" in text
    best = load_spec(written)
    assert best.sweep is None
    assert best.hyperparameters == {"lr": 0.02, "epochs": 3}
    # The debug stage's own lr would win over the base's: it is the trial's value too.
    assert best.at_stage("debug").hyperparameters == {"lr": 0.02, "epochs": 1}


def test_no_best_spec_before_a_trial_completed(spec_file: Path) -> None:
    with pytest.raises(UserInputError, match="has no completed trial yet"):
        write_best_spec(result_of(spec_file, [row(0, "failed", None, 0.1)]))


def test_a_trials_spec_has_its_name_values_and_no_sweep(spec_file: Path) -> None:
    spec = load_spec(spec_file)
    trial = trial_spec(spec, "debug", 2, {"lr": 0.003})
    assert trial.name == "tiny-t3"
    assert trial.sweep is None
    assert trial.at_stage("debug").hyperparameters == {"lr": 0.003, "epochs": 1}
    assert trial.at_stage("formal").hyperparameters == {"lr": 0.003, "epochs": 3}


def test_each_trial_writes_its_outputs_to_a_folder_of_its_own(spec_file: Path) -> None:
    spec_file.write_text(
        spec_file.read_text() + "outputs: [{name: train_url, obs: 'obs://my-bucket/out/'}]\n"
    )
    spec = load_spec(spec_file)
    first, second = (trial_spec(spec, "debug", n, {"lr": 0.1}) for n in (0, 1))
    assert first.outputs[0].obs.uri == "obs://my-bucket/out/tiny-t1/"
    assert second.outputs[0].obs.uri == "obs://my-bucket/out/tiny-t2/"
    assert spec.outputs[0].obs.uri == "obs://my-bucket/out/"  # the spec itself is unchanged
    # The stage's folder is below the trial's: a trial's debug job never sees another's.
    assert first.at_stage("debug").outputs[0].obs.uri == "obs://my-bucket/out/tiny-t1/debug/"
    assert second.at_stage("formal").outputs[0].obs.uri == "obs://my-bucket/out/tiny-t2/formal/"


def test_a_folder_a_stage_names_gets_each_trials_below_it(spec_file: Path) -> None:
    spec_file.write_text(
        spec_file.read_text().replace(
            "stages:\n", "stages:\n  formal: {outputs: {train_url: 'obs://my-bucket/release/'}}\n"
        )
        + "outputs: [{name: train_url, obs: 'obs://my-bucket/out/'}]\n"
    )
    spec = load_spec(spec_file)
    first, second = (trial_spec(spec, "formal", n, {"lr": 0.1}) for n in (0, 1))
    assert first.at_stage("formal").outputs[0].obs.uri == "obs://my-bucket/release/tiny-t1/"
    assert second.at_stage("formal").outputs[0].obs.uri == "obs://my-bucket/release/tiny-t2/"
    assert second.at_stage("formal").hyperparameters["lr"] == 0.1


def test_the_plot_draws_the_objective_over_trials_and_against_each_parameter(
    spec_file: Path,
) -> None:
    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    rows = [
        row(0, "completed", 0.5, 0.001),
        row(1, "pruned", 2.0, 0.9),
        row(2, "failed", None, 0.5),
    ]
    figure = result_of(spec_file, rows).plot()
    try:
        over_trials, against_lr = figure.axes
        assert over_trials.get_xlabel() == "trial" and over_trials.get_ylabel() == "loss"
        assert against_lr.get_xlabel() == "lr" and against_lr.get_xscale() == "log"
        assert len(over_trials.collections) == 2  # the failed trial has no objective to draw
    finally:
        plt.close(figure)


def test_importance_names_the_parameter_the_objective_depends_on(spec_file: Path) -> None:
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)
    study = optuna.create_study(sampler=optuna.samplers.RandomSampler(seed=3))
    assert importance_of(study) == {}  # nothing completed: nothing to say
    for _ in range(8):
        trial = study.ask()
        lr = trial.suggest_float("lr", 0.001, 1.0, log=True)
        trial.suggest_categorical("batch_size", [16, 32])  # the objective ignores it
        study.tell(trial, lr)
    found = importance_of(study)
    assert set(found) == {"lr", "batch_size"}
    assert found["lr"] > 2 * found["batch_size"]

    pytest.importorskip("matplotlib")
    import matplotlib.pyplot as plt

    rows = [row(0, "completed", 0.5, 0.01), row(1, "completed", 0.2, 0.1)]
    figure = SweepResult(result_of(spec_file, rows).info, tuple(rows), found).plot()
    try:
        assert [ax.get_title() for ax in figure.axes][-1] == "parameter importance (fANOVA)"
        assert len(figure.axes) == 3  # over trials, against lr, importance
    finally:
        plt.close(figure)

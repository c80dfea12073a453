"""``majob run SPEC --fail-at ...``: a resume rehearsal of real processes (plain-Python scripts:
torch is not the point), a resumed script told from one that starts over, 2 nodes losing one,
and ``expect: resumes: true`` in the pipeline's local stage."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

runner = CliRunner()

# Counts STEPS steps, saving its step after each (rank 0, atomically) under train_url/ckpt/ and,
# when RESUME is true, starting after the saved step. The sleep makes a kill land mid-run.
SCRIPT = """\
import argparse, json, os, time
RESUME = {resume}
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
rank = int(os.environ["VC_TASK_INDEX"])
folder = os.path.join(args.train_url, "ckpt")
state = os.path.join(folder, "state.json")
start = 0
if RESUME and os.path.exists(state):
    with open(state) as saved:
        start = json.load(saved)["step"] + 1
for step in range(start, 12):
    time.sleep(0.15)
    print(f"step {{step}} loss {{1 / (step + 1):.4f}}", flush=True)
    if rank == 0:
        os.makedirs(folder, exist_ok=True)
        with open(state + ".partial", "w") as out:
            json.dump({{"step": step}}, out)
        os.replace(state + ".partial", state)
"""

SPEC = """\
name: tiny
code: {{dir: code, boot_file: train.py}}
image: {{engine: PyTorch, version: pytorch_1.8.0}}
resources: {{flavor: modelarts.vm.cpu.8u}}
inputs:
  - {{name: data_url, obs: "obs://bucket/in/", local: data}}
outputs:
  - {{name: train_url, obs: "obs://bucket/out/", local: out}}
metrics: {metrics}
{extra}
"""

PROGRESS = "{step: 'step (\\d+)', loss: 'loss ([0-9.]+)'}"
CHECKPOINTS = "fault_tolerance: {retries: 3, checkpoints: train_url/ckpt/}"


def _project(
    root: Path, *, resume: bool = True, metrics: str = PROGRESS, extra: str = CHECKPOINTS
) -> Path:
    (root / "code").mkdir(parents=True)
    (root / "code" / "train.py").write_text(SCRIPT.format(resume=resume))
    (root / "data").mkdir()
    (root / "data" / "in.txt").write_text("x")
    spec = root / "spec.yaml"
    spec.write_text(SPEC.format(metrics=metrics, extra=extra))
    return spec


def _rehearse(spec: Path, *args: str) -> tuple[int, str]:
    runs = spec.parent / "runs"
    result = runner.invoke(app, ["run", str(spec), "--runs-dir", str(runs), *args])
    return result.exit_code, result.output


def test_a_script_that_resumes_is_seen_to_resume_and_end_where_it_would(tmp_path: Path) -> None:
    code, output = _rehearse(_project(tmp_path), "--fail-at", "step:4", "--expect-resume")
    assert code == 0, output
    assert "every node killed at point 4 of step" in output
    assert output.count("[worker-0] step 0 loss 1.0000") == 2  # the runs' lines are shown
    assert "kept across the restart: output train_url" in output
    assert "train_url/ckpt/state.json" in output
    assert "resumed: yes, at step " in output
    assert "resumed: yes, at step 0" not in output
    assert "final loss: 0.0833 after the restart, 0.0833 uninterrupted: matches" in output
    assert "would not restart" not in output  # retries: 3


def test_a_script_that_ignores_its_checkpoints_started_from_step_0(tmp_path: Path) -> None:
    spec = _project(tmp_path, resume=False)
    code, output = _rehearse(spec, "--fail-at", "step:4", "--expect-resume")
    assert "resumed: no, started from step 0" in output
    assert code == 1
    assert "--expect-resume: the restarted run did not resume" in output


def test_without_a_checkpoint_output_nothing_survives_the_restart(tmp_path: Path) -> None:
    code, output = _rehearse(_project(tmp_path, extra=""), "--fail-at", "step:4")
    assert code == 0, output  # not demanded: the rehearsal reports, it does not judge
    assert "nothing; no fault_tolerance.checkpoints in the spec" in output
    assert "fault_tolerance.retries is 0, so ModelArts would not restart this job" in output
    assert "resumed: no, started from step 0" in output


def test_checkpoints_saved_elsewhere_than_the_spec_says_are_pointed_out(tmp_path: Path) -> None:
    extra = "fault_tolerance: {retries: 1, checkpoints: train_url/weights/}"
    code, output = _rehearse(_project(tmp_path, extra=extra), "--fail-at", "step:3")
    assert code == 0, output
    assert "none under train_url/weights/: the script saved no checkpoint there" in output
    assert "resumed: yes" in output  # the whole output is predownloaded, its ckpt/ too


def test_two_nodes_one_dies_and_the_whole_job_restarts(tmp_path: Path) -> None:
    spec = _project(tmp_path)
    code, output = _rehearse(spec, "--nodes", "2", "--fail-at", "step:3", "--node", "1")
    assert code == 0, output
    assert "worker-1 killed at point 3 of step" in output
    assert "resumed: yes, at step " in output
    records = [json.loads(p.read_text()) for p in (tmp_path / "runs").glob("*/record.json")]
    killed = next(r for r in records if r["status"] == "failed")
    exits = {node["name"]: node["exit_code"] for node in killed["nodes"]}
    assert exits["worker-1"] == -9  # SIGKILL, as a node lost to a fault
    assert exits["worker-0"] != 0  # stopped with it: the whole job restarts
    assert any(
        n.startswith("resume rehearsal: worker-1 killed at point 3") for n in killed["notices"]
    )
    assert sum(r["status"] == "passed" for r in records) == 2


def test_by_length_against_an_earlier_run(tmp_path: Path) -> None:
    """No progress metric: the restart's point count against a passed run's (--compare-to),
    which is not run again."""
    spec = _project(tmp_path, metrics="{loss: 'loss ([0-9.]+)'}")
    code, output = _rehearse(spec)
    assert code == 0, output
    (reference,) = (tmp_path / "runs").iterdir()
    code, output = _rehearse(spec, "--fail-at", "loss:5", "--compare-to", reference.name)
    assert code == 0, output
    assert "uninterrupted (--compare-to)" in output and reference.name in output
    assert "resumed: yes, at point " in output
    assert "12 uninterrupted" in output
    assert len(list((tmp_path / "runs").iterdir())) == 3


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--fail-at", "soon"], "--fail-at 'soon': write a duration"),
        (
            ["--fail-at", "accuracy:3"],
            "the spec has no metric 'accuracy' (its metrics: step, loss)",
        ),
        (["--fail-at", "step:0"], "N must be a whole number from 1"),
        (["--fail-at", "150%"], "a share of the run is between 0% and 100%"),
        (["--fail-at", "step:3", "--node", "2"], "--node 2: the run has 1 node(s), numbered 0-0"),
        (["--node", "0"], "--node needs --fail-at"),
        (["--fail-at", "5s", "--stage", "debug"], "the rehearsal runs on this machine"),
    ],
)
def test_bad_rehearsal_options_are_one_clear_error(
    tmp_path: Path, args: list[str], message: str
) -> None:
    code, output = _rehearse(_project(tmp_path), *args)
    assert code != 0
    assert message in output
    assert not (tmp_path / "runs").exists()  # said before any run started


def test_a_fault_after_the_end_never_comes_and_says_so(tmp_path: Path) -> None:
    code, output = _rehearse(
        _project(tmp_path), "--fail-at", "step:40", "--compare-to", "nothing-here"
    )
    assert code != 0 and "no run record" in output
    code, output = _rehearse(_project(tmp_path / "b"), "--fail-at", "step:40")
    assert code != 0
    assert "the fault (every node killed at point 40 of step) never came: it passed first" in output


def test_expect_resumes_makes_the_local_stage_rehearse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # the local stage's runs go under ./.majob
    spec = _project(tmp_path, resume=False, extra=f"{CHECKPOINTS}\nexpect: {{resumes: true}}")
    result = runner.invoke(app, ["pipeline", str(spec), "--until", "local"])
    assert result.exit_code != 0
    assert "expect.resumes: rehearsing a failure at 50% of the run" in result.output
    assert "expect.resumes: after every node killed at point 6 of step, the restarted run " \
        "started from step 0" in result.output  # fmt: skip

    fixed = _project(tmp_path / "fixed", extra=f"{CHECKPOINTS}\nexpect: {{resumes: true}}")
    result = runner.invoke(app, ["pipeline", str(fixed), "--until", "local"])
    assert result.exit_code == 0, result.output
    assert "expect.resumes: restarted at step " in result.output


def test_a_kill_by_time_without_metrics_cannot_tell(tmp_path: Path) -> None:
    spec = _project(tmp_path, metrics="{}")
    code, output = _rehearse(spec, "--fail-at", "1s", "--expect-resume")
    assert "every node killed 1s into the run" in output
    assert "resumed: cannot tell (cannot tell: the spec has no `metrics:`)" in output
    assert code == 1  # demanded, and nothing shows it happened


def test_from_python(tmp_path: Path) -> None:
    import majob

    spec = majob.load_spec(_project(tmp_path))
    lines: list[str] = []
    options = majob.RehearsalOptions(runs_dir=tmp_path / "runs", on_line=lines.append)
    found = majob.rehearse(spec, "step:4", options=options)
    assert found.passed and found.verdict.resumed is True
    assert found.verdict.began.startswith("step ") and found.verdict.began != "step 0"
    # The kill can land between the write of state.json.partial and its rename: the folder then
    # holds the partial file too, as a real kill would leave it.
    assert found.carried in (
        ("train_url/ckpt/state.json",),
        ("train_url/ckpt/state.json", "train_url/ckpt/state.json.partial"),
    )
    assert [a.label for a in (found.reference, found.killed, found.restarted)] == [
        "uninterrupted", "killed", "restarted",
    ]  # fmt: skip
    assert found.killed.status == "failed" and found.restarted.status == "passed"
    assert sum(line == "[worker-0] step 11 loss 0.0833" for line in lines) == 2

"""``majob run``: flags, summary, errors, and Ctrl-C as a real process."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.testing import wait_until

runner = CliRunner()

SCRIPT = """\
import argparse, os, sys, time
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--sleep", type=float, default=0)
parser.add_argument("--init_method")
parser.add_argument("--rank")
parser.add_argument("--world_size")
args = parser.parse_args()
print("rank", os.environ["VC_TASK_INDEX"], "of", os.environ["VC_WORKER_NUM"])
with open(os.path.join(args.train_url, "out.txt"), "w") as out:
    out.write(open(os.path.join(args.data_url, "in.txt")).read())
pid_dir = os.environ.get("PID_DIR")
if pid_dir:
    import subprocess
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
    part = os.path.join(pid_dir, "." + os.environ["VC_TASK_INDEX"])
    with open(part, "w") as f:
        f.write(f"{os.getpid()} {child.pid}")
    os.replace(part, os.path.join(pid_dir, os.environ["VC_TASK_INDEX"]))  # whole or absent
time.sleep(args.sleep)
"""

SPEC = """\
name: tiny
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0}
resources: {flavor: modelarts.vm.cpu.8u}
inputs:
  - {name: data_url, obs: "obs://bucket/in/", local: data}
outputs:
  - {name: train_url, obs: "obs://bucket/out/", local: out}
"""


def _pid_files(directory: Path) -> list[Path]:
    return [f for f in directory.iterdir() if not f.name.startswith(".")]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text(SCRIPT)
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "in.txt").write_text("payload")
    (tmp_path / "spec.yaml").write_text(SPEC)
    return tmp_path


def test_run_local_prints_prefixed_lines_and_a_summary(project: Path) -> None:
    runs = project / "runs"
    result = runner.invoke(
        app, ["run", str(project / "spec.yaml"), "--nodes", "2", "--runs-dir", str(runs)]
    )
    assert result.exit_code == 0, result.output
    shown = result.output.splitlines()
    if shown[0].startswith("[majob] 2 nodes share this machine's CPUs: OMP_NUM_THREADS="):
        shown.pop(0)  # unless this shell set OMP_NUM_THREADS
    starting, *lines = shown
    assert starting.startswith("[majob] run ") and ": starting 2 nodes (" in starting
    assert sorted(lines[:2]) == ["[worker-0] rank 0 of 2", "[worker-1] rank 1 of 2"]
    assert lines[2].startswith("run ") and ": passed in " in lines[2] and "(2 nodes)" in lines[2]
    assert lines[3] == f"  output train_url: out.txt (7 bytes) -> {project / 'out' / 'out.txt'}"
    assert (project / "out" / "out.txt").read_text() == "payload"
    assert len(list(runs.glob("*/record.json"))) == 1


def test_set_and_input_flags(project: Path) -> None:
    other = project / "other"
    other.mkdir()
    (other / "in.txt").write_text("other data")
    result = runner.invoke(
        app,
        [
            "run",
            str(project / "spec.yaml"),
            "--set",
            "hyperparameters.sleep=0.1",
            "--input",
            f"data_url={other}",
            "--runs-dir",
            str(project / "runs"),
        ],
    )
    assert result.exit_code == 0, result.output
    assert (project / "out" / "out.txt").read_text() == "other data"
    record = json.loads(next((project / "runs").glob("*/record.json")).read_text())
    assert "--sleep=0.1" in record["nodes"][0]["argv"]


def test_secrets_stay_out_of_the_code_copy_unless_allowed(project: Path) -> None:
    (project / "code" / ".env").write_text("TOKEN=1\n")
    args = ["run", str(project / "spec.yaml"), "--runs-dir", str(project / "runs")]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.output.splitlines()[0] == (
        "[majob] left out of the code copy 1 file that may hold secrets: .env "
        "(--allow-secrets, or a '!.env' line in .majobignore, keeps them)"
    )
    copies = list((project / "runs").glob("*/ma-user/modelarts/user-job-dir/code"))
    assert [sorted(p.name for p in c.iterdir()) for c in copies] == [["train.py"]]
    allowed = runner.invoke(app, [*args, "--allow-secrets"])
    assert allowed.exit_code == 0, allowed.output
    assert "left out" not in allowed.output
    copies = list((project / "runs").glob("*/ma-user/modelarts/user-job-dir/code/.env"))
    assert len(copies) == 1


@pytest.mark.parametrize("stage", ["debug", "formal"])
def test_cloud_stages_take_the_submit_path(
    project: Path, stage: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No profile and no keys: submit's own one-line configuration error, nothing created.
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(project / "no-config"))
    for name in ("HUAWEICLOUD_SDK_AK", "HUAWEICLOUD_SDK_SK", "MAJOB_OBS_CREDENTIALS"):
        monkeypatch.delenv(name, raising=False)
    result = runner.invoke(app, ["run", str(project / "spec.yaml"), "--stage", stage])
    assert result.exit_code == 2
    if stage == "debug":
        assert "error: no OBS credentials found" in result.output
    else:  # submit's formal gate comes first: debug never passed for this code
        assert "error: formal refused for " in result.output


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--stage", "prod"], "error: --stage 'prod': choose one of local, debug, formal"),
        (["--input", "data_url"], "error: --input 'data_url': write NAME=PATH"),
        (["--timeout", "soon"], "error: --timeout 'soon': 'soon' is not a duration"),
    ],
)
def test_bad_flags_exit_2(project: Path, args: list[str], message: str) -> None:
    result = runner.invoke(app, ["run", str(project / "spec.yaml"), *args])
    assert result.exit_code == 2
    assert message in result.output


def test_a_failed_node_is_named_with_its_last_lines(project: Path) -> None:
    result = runner.invoke(
        app,
        [
            "run",
            str(project / "spec.yaml"),
            "--set",
            "hyperparameters.unknown=1",
            "--runs-dir",
            str(project / "runs"),
        ],
    )
    assert result.exit_code == 1
    assert "error: worker-0 exited with code 2; its last lines:" in result.output
    assert "  | train.py: error: unrecognized arguments: --unknown=1" in result.output
    assert "hint: full log: " in result.output
    assert "Traceback" not in result.output


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


@pytest.mark.slow
def test_ctrl_c_leaves_no_child_process(project: Path) -> None:
    pid_dir = project / "pids"
    pid_dir.mkdir()
    spec = project / "spec.yaml"
    spec.write_text(SPEC + textwrap.dedent(f"env: {{PID_DIR: {str(pid_dir)!r}}}\n"))
    majob = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "majob",
            "run",
            str(spec),
            "--nodes",
            "2",
            "--set",
            "hyperparameters.sleep=120",
            "--runs-dir",
            str(project / "runs"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Each node writes its file whole (a rename), so two files mean both nodes are up.
    wait_until(lambda: len(_pid_files(pid_dir)) >= 2, "both nodes' pid files")
    pids = [int(p) for f in _pid_files(pid_dir) for p in f.read_text().split()]
    assert len(pids) == 4 and all(_alive(p) for p in pids)
    majob.send_signal(signal.SIGINT)
    _, stderr = majob.communicate(timeout=30)
    assert majob.returncode == 130
    assert "error: interrupted; every node was stopped" in stderr
    assert "Traceback" not in stderr
    assert not any(_alive(p) for p in pids)
    record = json.loads(next((project / "runs").glob("*/record.json")).read_text())
    assert record["status"] == "interrupted"
    assert os.path.isfile(project / "runs" / record["run_id"] / "logs" / "worker-1.log")


def test_input_rescues_a_spec_whose_local_does_not_exist(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = project / "spec.yaml"
    spec.write_text(SPEC.replace("local: data}", "local: missing}"))
    other = project / "elsewhere"
    other.mkdir()
    (other / "in.txt").write_text("rescued")
    monkeypatch.chdir(project)  # a relative --input PATH is read from the current directory
    args = ["run", str(spec), "--runs-dir", str(project / "runs")]
    refused = runner.invoke(app, args)
    assert refused.exit_code == 2
    assert "inputs[0].local: local stand-in" in refused.stderr
    result = runner.invoke(app, [*args, "--input", "data_url=elsewhere"])
    assert result.exit_code == 0, result.output
    assert (project / "out" / "out.txt").read_text() == "rescued"


@pytest.mark.parametrize(
    ("pair", "message"),
    [
        ("nope=data", "error: --input nope=data: the spec has no input named 'nope' (inputs: "),
        ("data_url=absent", "error: --input data_url=absent: inputs[0].local: local stand-in "),
    ],
)
def test_a_bad_input_names_the_flag(
    project: Path, monkeypatch: pytest.MonkeyPatch, pair: str, message: str
) -> None:
    monkeypatch.chdir(project)
    result = runner.invoke(app, ["run", "spec.yaml", "--input", pair])
    assert result.exit_code == 2
    assert result.stderr.startswith(message), result.stderr


def test_a_run_never_silently_replaces_an_output_file(project: Path) -> None:
    args = ["run", str(project / "spec.yaml"), "--runs-dir", str(project / "runs")]
    first = runner.invoke(app, args)
    assert first.exit_code == 0, first.output
    (project / "out" / "notes.txt").write_text("mine")
    again = runner.invoke(app, args)  # the same output: nothing to keep or replace
    assert again.exit_code == 0, again.output
    assert "kept" not in again.output and "replaced" not in again.output

    (project / "data" / "in.txt").write_text("a worse model")
    kept = runner.invoke(app, args)
    assert kept.exit_code == 0, kept.output
    assert (project / "out" / "out.txt").read_text() == "payload"
    assert (project / "out" / "notes.txt").read_text() == "mine"
    run_id = next(ln for ln in kept.stdout.splitlines() if ln.startswith("run ")).split()[1][:-1]
    record = json.loads((project / "runs" / run_id / "record.json").read_text())
    own = project / "runs" / record["run_id"] / "ma-user/modelarts/outputs/train_url_0/out.txt"
    assert own.read_text() == "a worse model"
    assert (
        f"  output train_url: out.txt (13 bytes) in {own} "
        f"(not copied: {project / 'out' / 'out.txt'} differs and was kept)"
    ) in kept.stdout.splitlines()
    assert "kept 1 existing output file this run would have changed (--overwrite replaces)" in (
        kept.stdout
    )
    assert record["output_copies"][0]["kept"] == ["out.txt"]

    replaced = runner.invoke(app, [*args, "--overwrite"])
    assert replaced.exit_code == 0, replaced.output
    assert (project / "out" / "out.txt").read_text() == "a worse model"
    assert (project / "out" / "notes.txt").read_text() == "mine"
    assert (
        f"  output train_url: out.txt (13 bytes) -> {project / 'out' / 'out.txt'} "
        "(replaced the file that was there)"
    ) in replaced.stdout.splitlines()
    assert "replaced 1 existing output file (--overwrite)" in replaced.stdout


def test_a_dump_run_summarises_its_dump_and_keeps_it_out_of_the_outputs_local(
    project: Path,
) -> None:
    pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")
    # A script without torch: the bootstrap never starts msprobe, so the script writes what a
    # dumped step leaves (the summary and the copy are what is checked here).
    dumped = textwrap.dedent(
        """
        import os
        dump = os.path.join(args.train_url, "precision-dump")
        os.makedirs(os.path.join(dump, "step0", "rank0"))
        open(os.path.join(dump, "step0", "rank0", "dump.json"), "w").write("{}")
        open(os.path.join(dump, "msprobe-rank0.log"), "w").write("x (1) [INFO] dumped\\n")
        """
    )
    (project / "code" / "train.py").write_text(SCRIPT + dumped)
    args = ["run", str(project / "spec.yaml"), "--runs-dir", str(project / "runs"), "--dump"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in (project / "out").iterdir()) == ["out.txt"]
    lines = result.output.splitlines()
    assert not [line for line in lines if "output train_url: precision-dump/" in line]
    (summary,) = [line for line in lines if line.startswith("precision dump: ")]
    # The script's step and log, and the spec majob kept for `majob compare`: three files.
    assert summary.startswith("precision dump: steps 0 (1 rank, 3 files, ")
    assert "  msprobe's messages: msprobe-rank0.log (1 line, 0 warnings, 0 errors)" in lines
    assert lines[-1].startswith("  compare it with another dump run: majob compare ")

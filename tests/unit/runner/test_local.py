"""The local runner with tiny non-torch scripts: the container it builds, records, faults."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from majob.errors import NodeFailedError, RunnerError, RunTimeoutError
from majob.runner.local import run_local
from majob.runner.record import effective_spec_digest
from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from majob.testing import wait_until

MakeProject = Callable[..., JobSpec]

# Every node writes what it saw (argv, container env, its cwd, the files of its code dir).
REPORT = """
import argparse, json, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, unknown = parser.parse_known_args()
rank = os.environ["VC_TASK_INDEX"]
code = os.path.dirname(os.path.abspath(__file__))
files = sorted(os.path.relpath(os.path.join(d, f), code) for d, _, fs in os.walk(code) for f in fs)
seen = {
    "argv": sys.argv[1:],
    "env": {k: v for k, v in os.environ.items() if k.startswith(("MA_", "VC_", "WORKSPACE", "OMP_"))},
    "cwd": os.getcwd(),
    "files": files,
    "data": open(os.path.join(args.data_url, "numbers.txt")).read(),
}
with open(os.path.join(args.train_url, f"seen-{rank}.json"), "w") as out:
    json.dump(seen, out)
print(f"hello from {rank}")
"""

# Writes its pid (and a grandchild's) where the test can find them, then behaves as told.
PIDS = """
import os, subprocess, sys, time
pids = os.environ["PID_DIR"]
rank = int(os.environ["VC_TASK_INDEX"])
child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)"])
with open(os.path.join(pids, f"{rank}.tmp"), "w") as out:
    out.write(f"{os.getpid()} {child.pid}")
os.replace(os.path.join(pids, f"{rank}.tmp"), os.path.join(pids, f"{rank}.pids"))  # whole or absent
print("started", flush=True)
if rank == int(os.environ.get("FAIL_RANK", "-1")):
    while len([f for f in os.listdir(pids) if f.endswith(".pids")]) < int(os.environ["VC_WORKER_NUM"]):
        time.sleep(0.05)
    print("node failing on purpose", flush=True)
    sys.exit(3)
time.sleep(120)
"""


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie still answers kill(0); it is gone for our purpose once it is no longer running.
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().split(")")[-1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def _processes_of_run(run_id: str) -> list[int]:
    """Live processes that carry the run's job name in their environment (children inherit it)."""
    marker = f"MA_VJ_NAME=modelarts-job-{run_id}".encode()
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                environ = (entry / "environ").read_bytes()
            except OSError:  # gone, or not ours
                continue
            if marker in environ.split(b"\0") and _alive(int(entry.name)):
                found.append(int(entry.name))
    return found


def _pids(directory: Path) -> list[int]:
    return [int(p) for f in directory.glob("*.pids") for p in f.read_text().split()]


def test_two_nodes_see_the_container_and_leave_a_record(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(REPORT, hyperparameters={"epochs": 2, "amp": False})
    lines: list[str] = []
    result = run_local(spec, nodes=2, runs_dir=runs_dir, on_line=lines.append)

    assert result.ok and [n.exit_code for n in result.nodes] == [0, 0]
    chosen = os.environ.get("OMP_NUM_THREADS")  # this shell's choice is kept, and not said
    threads = chosen or str(max(1, len(os.sched_getaffinity(0)) // 2))
    if not chosen:
        assert lines.pop(0) == (
            f"[majob] 2 nodes share this machine's CPUs: OMP_NUM_THREADS={threads} each (as "
            "torchrun sets it; put OMP_NUM_THREADS in the spec's env or this shell to choose)"
        )
    starting, *said = lines  # what majob does before the nodes' first lines
    assert starting == (
        f"[majob] run {result.run_id}: starting 2 nodes ({Path(sys.executable).name} train.py); "
        "the script's output follows once its imports are done"
    )
    assert sorted(said) == ["[worker-0] hello from 0", "[worker-1] hello from 1"]
    root = result.run_dir / "ma-user" / "modelarts"
    seen = json.loads((tmp_path / "out" / "seen-1.json").read_text())  # copied to output.local
    port = seen["argv"][-3].rsplit(":", 1)[1]
    assert seen["argv"] == [
        f"--data_url={root}/inputs/data_url_0",
        f"--train_url={root}/outputs/train_url_0",
        "--epochs=2",
        "--amp=false",
        f"--init_method=tcp://127.0.0.1:{port}",
        "--rank=1",
        "--world_size=2",
    ]
    assert seen["env"]["MA_JOB_DIR"] == str(root / "user-job-dir")
    assert seen["env"]["VC_TASK_INDEX"] == "1" and seen["env"]["MA_NUM_HOSTS"] == "2"
    assert seen["env"]["OMP_NUM_THREADS"] == threads
    assert seen["cwd"] == str(root / "user-job-dir" / "proj")
    assert seen["data"] == "1 2 3\n"

    record = json.loads(result.record.read_text())
    assert record["status"] == "passed"
    assert record["spec_digest"] == effective_spec_digest(
        spec.at_stage("local").model_copy(
            update={"resources": spec.resources.model_copy(update={"nodes": 2})}
        )
    )
    assert [n["exit_code"] for n in record["nodes"]] == [0, 0]
    assert record["duration_seconds"] > 0
    sizes = {o["path"]: o["size"] for o in record["outputs"]}
    assert sizes == {
        f"seen-{i}.json": (tmp_path / "out" / f"seen-{i}.json").stat().st_size for i in (0, 1)
    }
    for node in (0, 1):
        assert (
            result.run_dir / "logs" / f"worker-{node}.log"
        ).read_text() == f"hello from {node}\n"
    assert result.findings == ()


def test_host_credentials_do_not_reach_the_nodes(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HUAWEICLOUD_SDK_AK", "HOSTACCESSKEY")
    monkeypatch.setenv("HUAWEICLOUD_SDK_SK", "host-secret-key")
    monkeypatch.setenv("MAJOB_OBS_ENDPOINT", "http://127.0.0.1:1")
    monkeypatch.setenv("KEPT_FROM_THE_SHELL", "yes")
    spec = make_project(
        """
        import os
        print(sorted(k for k in os.environ if k.startswith(("HUAWEICLOUD", "MAJOB_OBS", "KEPT"))))
        """
    )
    lines: list[str] = []
    result = run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    assert lines[1:] == ["[worker-0] ['KEPT_FROM_THE_SHELL']"]
    assert "host-secret-key" not in result.record.read_text()


def test_code_is_copied_with_the_upload_ignore_rules(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(
        REPORT,
        files={".gitignore": "secret.txt\n", "secret.txt": "x", "a.ckpt": "x", "lib/util.py": ""},
        code={"dir": str(tmp_path / "proj"), "boot_file": "train.py", "ignore": ["*.ckpt"]},
    )
    run_local(spec, runs_dir=runs_dir, on_line=lambda line: None)
    seen = json.loads((tmp_path / "out" / "seen-0.json").read_text())
    assert seen["files"] == [".gitignore", "lib/util.py", "train.py"]


def test_files_that_look_like_secrets_stay_out_of_the_code_copy(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(
        "import os\nprint(sorted(os.listdir('.')))\n",
        files={".env": "TOKEN=1\n", "keys/id_rsa": "KEY", "keys/ca.pem": "PEM"},
    )
    lines: list[str] = []
    result = run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    notice = (
        "left out of the code copy 3 files that may hold secrets: .env, keys/ca.pem, "
        "keys/id_rsa (--allow-secrets, or a '!.env' line in .majobignore, keeps them)"
    )
    assert lines[0] == f"[majob] {notice}"
    assert result.notices == (notice,)
    assert lines[-1] == "[worker-0] ['train.py']"

    allowed = run_local(spec, runs_dir=runs_dir, on_line=lines.append, allow_secrets=True)
    assert lines[-1] == "[worker-0] ['.env', 'keys', 'train.py']"
    assert not allowed.notices


def test_values_from_the_environment_are_masked_in_records_and_logs(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    make_project("import sys\nprint('argv', sys.argv[1:])\nprint('token is', sys.argv[-1])\n")
    spec_file = tmp_path / "job.yaml"
    spec_file.write_text(
        "name: tiny\n"
        "code: {dir: proj, boot_file: train.py}\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0}\n"
        "resources: {flavor: modelarts.vm.cpu.8u}\n"
        "hyperparameters: {epochs: 2, token: '${MY_SECRET}'}\n"
    )
    spec = load_spec(spec_file, environ={"MY_SECRET": "hunter2-very-secret"})
    lines: list[str] = []
    result = run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    record = result.record.read_text()
    logs = (result.run_dir / "logs" / "worker-0.log").read_text()
    for written in (record, logs, "\n".join(lines)):
        assert "hunter2-very-secret" not in written
    assert "--token=***" in json.loads(record)["nodes"][0]["argv"]
    assert "--epochs=2" in json.loads(record)["nodes"][0]["argv"]
    assert lines[-1] == "[worker-0] token is --token=***"


def test_stage_overrides_apply(make_project: MakeProject, runs_dir: Path, tmp_path: Path) -> None:
    spec = make_project(
        REPORT,
        hyperparameters={"epochs": 10},
        stages={"local": {"nodes": 2, "hyperparameters": {"epochs": 1}}},
    )
    result = run_local(spec, runs_dir=runs_dir, on_line=lambda line: None)
    assert len(result.nodes) == 2
    seen = json.loads((tmp_path / "out" / "seen-0.json").read_text())
    assert "--epochs=1" in seen["argv"]


def test_custom_image_command_runs_through_the_shell(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(
        REPORT,
        image={"swr": "swr.example.com/o/i:1", "command": "cd ${WORKSPACE} && python train.py"},
        hyperparameters={"note": "two words"},
    )
    run_local(spec, runs_dir=runs_dir, on_line=lambda line: None)
    seen = json.loads((tmp_path / "out" / "seen-0.json").read_text())
    assert seen["argv"][-1] == "--note=two words"


CUSTOM = {"swr": "swr.example.com/o/i:1"}
OUT = '"$MA_MOUNT_PATH/outputs/train_url_0"'


def _custom(make_project: MakeProject, command: str, **changes: object) -> JobSpec:
    return make_project("print('unused')\n", image={**CUSTOM, "command": command}, **changes)


def test_custom_command_env_value_is_a_value_not_a_command(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = _custom(
        make_project, f"printf '%s\\n' $NOTE > {OUT}/note.txt", env={"NOTE": "a; echo INJECTED"}
    )
    lines: list[str] = []
    run_local(spec, runs_dir=runs_dir, on_line=lines.append)
    # As in the container: $NOTE is split into words, none of them runs.
    written = (tmp_path / "out" / "note.txt").read_text().splitlines()
    assert written[:3] == ["a;", "echo", "INJECTED"]
    # Nothing ran besides printf: the node printed nothing (majob's own notices aside).
    assert [line for line in lines if not line.startswith("[majob]")] == []


def test_custom_command_sees_this_machines_path_and_home(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = _custom(make_project, f'printf \'%s\\n\' "$HOME" "$PATH" > {OUT}/env.txt')
    run_local(spec, runs_dir=runs_dir, on_line=lambda _: None)
    home, path = (tmp_path / "out" / "env.txt").read_text().splitlines()[:2]
    assert home == os.environ["HOME"]
    assert path.endswith(os.environ["PATH"])  # after the interpreter's dir


def test_custom_command_keeps_single_quoted_text_literal(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = _custom(make_project, f"printf '%s\\n' '$X' \"$X\" > {OUT}/q.txt", env={"X": 1})
    run_local(spec, runs_dir=runs_dir, on_line=lambda _: None)
    assert (tmp_path / "out" / "q.txt").read_text().splitlines()[:2] == ["$X", "1"]


def test_custom_command_runs_under_a_run_dir_with_a_space(
    make_project: MakeProject, tmp_path: Path
) -> None:
    spec = make_project(
        REPORT,
        image={
            **CUSTOM,
            "command": "cd ${WORKSPACE} && python /home/ma-user/modelarts/user-job-dir/proj/train.py",
        },
    )
    runs = tmp_path / "my runs" / "it's here"
    result = run_local(spec, runs_dir=runs, on_line=lambda _: None)
    seen = json.loads((tmp_path / "out" / "seen-0.json").read_text())
    assert seen["cwd"] == str(result.run_dir / "ma-user/modelarts/user-job-dir/proj")


def test_custom_command_failure_is_not_masked_by_a_value(
    make_project: MakeProject, runs_dir: Path
) -> None:
    # In the container "$AFTER" only gives `false` two more arguments; it fails, so must the run.
    spec = _custom(make_project, "false $AFTER", env={"AFTER": "; true"})
    with pytest.raises(NodeFailedError) as caught:
        run_local(spec, runs_dir=runs_dir, on_line=lambda _: None)
    assert caught.value.node_exit_code == 1
    record = json.loads(next(runs_dir.glob("*/record.json")).read_text())
    assert record["status"] == "failed"


def test_missing_boot_file_is_found_before_anything_runs(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(REPORT, code={"dir": str(tmp_path / "proj"), "boot_file": "nope.py"})
    with pytest.raises(RunnerError, match=r"boot file 'nope\.py' not found"):
        run_local(spec, runs_dir=runs_dir)
    assert not runs_dir.exists()


def test_syntax_error_is_reported_at_its_line_before_any_node_starts(
    make_project: MakeProject, runs_dir: Path
) -> None:
    spec = make_project("import os\ndef broken(:\n    pass\n")
    with pytest.raises(RunnerError, match=r"train\.py:2:\d+: syntax error") as caught:
        run_local(spec, runs_dir=runs_dir)
    assert caught.value.hint == "fix the script; no node was started"
    assert not runs_dir.exists()


def test_input_without_local_says_how_to_add_it(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(REPORT, inputs=[{"name": "data_url", "obs": "obs://bucket/data/"}])
    with pytest.raises(RunnerError) as caught:
        run_local(spec, runs_dir=runs_dir)
    assert "input 'data_url' (obs://bucket/data/) has no local stand-in" in caught.value.message
    assert "local: path/to/data" in (caught.value.hint or "")
    assert "--input data_url=PATH" in (caught.value.hint or "")
    result = run_local(
        spec, inputs={"data_url": tmp_path / "data"}, runs_dir=runs_dir, on_line=lambda _: None
    )
    assert result.ok
    with pytest.raises(RunnerError, match="no input named 'other'"):
        run_local(spec, inputs={"other": tmp_path}, runs_dir=runs_dir)


def test_unknown_interpreter_is_a_clear_error(make_project: MakeProject, runs_dir: Path) -> None:
    with pytest.raises(RunnerError, match="interpreter 'no-such-python' not found"):
        run_local(make_project(REPORT), python="no-such-python", runs_dir=runs_dir)


def test_a_rejected_hyperparameter_shows_the_argparse_error_of_the_node(
    make_project: MakeProject, runs_dir: Path
) -> None:
    script = REPORT.replace(
        "args, unknown = parser.parse_known_args()", "args = parser.parse_args()"
    )
    spec = make_project(script, hyperparameters={"bogus": 1})
    with pytest.raises(NodeFailedError) as caught:
        run_local(spec, runs_dir=runs_dir, on_line=lambda _: None)
    assert caught.value.node == 0 and caught.value.node_exit_code == 2
    assert caught.value.message.startswith("worker-0 exited with code 2")
    assert "error: unrecognized arguments: --bogus=1" in caught.value.message


@pytest.mark.slow
def test_a_crashing_node_stops_the_others_and_leaves_no_process(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    spec = make_project(PIDS, env={"PID_DIR": str(pid_dir), "FAIL_RANK": 1})
    with pytest.raises(NodeFailedError) as caught:
        run_local(spec, nodes=3, runs_dir=runs_dir, on_line=lambda _: None)
    assert caught.value.node == 1 and caught.value.node_exit_code == 3
    assert "worker-1 exited with code 3 (the other nodes were stopped)" in caught.value.message
    assert "node failing on purpose" in caught.value.message
    pids = _pids(pid_dir)
    assert len(pids) == 6  # three nodes, each with a child
    # The runner waits (briefly) for every process group to go; a killed grandchild may still
    # be on its way out on a loaded machine, so poll, with a deadline that only catches a leak.
    wait_until(lambda: not any(_alive(p) for p in pids), "every node to be gone", timeout=30)
    record = json.loads(next(runs_dir.glob("*/record.json")).read_text())
    assert record["status"] == "failed"
    assert record["nodes"][1]["exit_code"] == 3
    # Stopped by the runner (SIGTERM), not left to finish their two-minute sleep.
    assert {n["exit_code"] for n in (record["nodes"][0], record["nodes"][2])} == {-15}


@pytest.mark.slow
def test_timeout_stops_every_node(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    pid_dir = tmp_path / "pids"
    pid_dir.mkdir()
    spec = make_project(PIDS, env={"PID_DIR": str(pid_dir)}, stages={"local": {"timeout": 1}})
    with pytest.raises(RunTimeoutError, match="passed its timeout of 1s"):
        run_local(spec, nodes=2, runs_dir=runs_dir, on_line=lambda _: None)
    record = json.loads(next(runs_dir.glob("*/record.json")).read_text())
    assert record["status"] == "timeout"
    # Both nodes were killed, however far they got in a second (a loaded machine may not even
    # have started Python): none of the run's processes, children included, is left.
    assert all(n["exit_code"] is not None and n["exit_code"] < 0 for n in record["nodes"])
    wait_until(
        lambda: not any(_alive(p) for p in _pids(pid_dir)), "every node to be gone", timeout=30
    )
    wait_until(
        lambda: _processes_of_run(record["run_id"]) == [],
        "no process of the run to be left",
        timeout=30,
    )


GUARDED = """
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
with open(os.path.join(args.train_url, "ok.txt"), "w") as out:   # an output: fine
    out.write("kept")
with open("results.txt", "w") as out:                             # line 9: lost on ModelArts
    out.write("lost")
open(os.environ["ORIGIN"] + "/train.py").read()                   # line 11: not in the container
open(os.path.join(args.data_url, "numbers.txt")).read()           # the input: fine
import tempfile
with tempfile.NamedTemporaryFile("w") as scratch:                 # temp: fine
    scratch.write("x")
"""


def test_guard_reports_writes_outside_the_outputs_and_host_reads_with_file_line(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    origin = tmp_path / "proj"
    spec = make_project(GUARDED, env={"ORIGIN": str(origin)})
    result = run_local(spec, runs_dir=runs_dir, on_line=lambda _: None)
    assert result.ok
    copy = result.run_dir / "ma-user" / "modelarts" / "user-job-dir" / "proj"
    described = [(f.kind, f.path, f.where) for f in result.findings]
    assert described == [
        ("read", str(origin / "train.py"), f"{origin / 'train.py'}:11"),
        ("write", str(copy / "results.txt"), f"{origin / 'train.py'}:9"),
    ]
    assert "ModelArts would not keep it" in result.findings[1].describe()
    recorded = json.loads(result.record.read_text())["guard"]
    assert [g["kind"] for g in recorded] == ["read", "write"]

    with pytest.raises(RunnerError, match=r"the guard found 2 problems \(--strict\)"):
        run_local(spec, strict=True, runs_dir=runs_dir, on_line=lambda _: None)


def test_a_sitecustomize_the_guard_shadows_still_runs(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text("import os\nos.environ['USER_SITE_RAN'] = 'yes'\n")
    monkeypatch.setenv("PYTHONPATH", str(site))
    spec = make_project("import os\nprint('site', os.environ.get('USER_SITE_RAN'))\n")
    lines: list[str] = []
    run_local(spec, runs_dir=runs_dir, on_line=lines.append, inputs={})
    assert lines[1:] == ["[worker-0] site yes"]


def test_a_finding_every_node_makes_is_reported_once(
    make_project: MakeProject, runs_dir: Path
) -> None:
    spec = make_project("open('scratch.txt', 'w').write('x')\n")
    result = run_local(spec, nodes=3, runs_dir=runs_dir, on_line=lambda _: None)
    assert [(f.kind, Path(f.path).name, f.node) for f in result.findings] == [
        ("write", "scratch.txt", "0")
    ]


def test_a_traceback_in_the_error_names_the_original_file(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project("import os\nraise RuntimeError('boom')\n")
    with pytest.raises(NodeFailedError) as caught:
        run_local(spec, runs_dir=runs_dir, on_line=lambda _: None)
    assert f'File "{tmp_path / "proj" / "train.py"}", line 2' in caught.value.message
    assert "RuntimeError: boom" in caught.value.message
    log = next(runs_dir.glob("*/logs/worker-0.log")).read_text()
    assert "user-job-dir/proj/train.py" in log  # the log keeps what the node really ran


def test_folders_named_run_dir_only_stay_in_the_run_directory(
    make_project: MakeProject, runs_dir: Path, tmp_path: Path
) -> None:
    spec = make_project(
        """
        import argparse, os
        parser = argparse.ArgumentParser()
        parser.add_argument("--train_url")
        args, _ = parser.parse_known_args()
        os.makedirs(os.path.join(args.train_url, "precision-dump", "step0"))
        open(os.path.join(args.train_url, "precision-dump", "step0", "dump.json"), "w").write("{}")
        open(os.path.join(args.train_url, "model.pth"), "w").write("weights")
        """
    )
    result = run_local(
        spec, runs_dir=runs_dir, on_line=lambda _: None, run_dir_only=("precision-dump",)
    )
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["model.pth"]
    kept = result.output_dir("train_url") / "precision-dump" / "step0" / "dump.json"
    assert kept.read_text() == "{}"
    assert {o.path for o in result.outputs} == {"model.pth", "precision-dump/step0/dump.json"}

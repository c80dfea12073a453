from __future__ import annotations

import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from majob.runner.layout import (
    container_paths,
    node_command,
    node_env,
    script_args,
)
from majob.runner.shellcmd import container_command
from majob.spec.envrefs import FromEnviron
from majob.spec.models import JobSpec

ROOT = Path("/runs/r1/ma-user")


def make_spec(**changes: Any) -> JobSpec:
    data: dict[str, Any] = {
        "name": "job",
        "code": {
            "dir": "/src/project",
            "boot_file": "train.py",
            "obs": "obs://bucket/a/demo-code/",
        },
        "image": {"engine": "PyTorch", "version": "pytorch_1.8.0"},
        "resources": {"flavor": "modelarts.vm.cpu.8u"},
        "inputs": [{"name": "data_url", "obs": "obs://bucket/data/", "local": "/d"}],
        "outputs": [{"name": "train_url", "obs": "obs://bucket/out/"}],
        "hyperparameters": {"epochs": 3, "lr": 0.01, "amp": True, "arch": "resnet 18"},
    }
    data.update(changes)
    return JobSpec.model_validate(data)


def test_paths_mirror_the_container() -> None:
    paths = container_paths(make_spec(), ROOT)
    assert paths.mount == ROOT / "modelarts"
    assert paths.job_dir == ROOT / "modelarts/user-job-dir"
    assert paths.code_dir == ROOT / "modelarts/user-job-dir/demo-code"  # last segment of code.obs
    assert paths.log_dir == ROOT / "modelarts/log"
    assert paths.inputs == {"data_url": ROOT / "modelarts/inputs/data_url_0"}
    assert paths.outputs == {"train_url": ROOT / "modelarts/outputs/train_url_0"}


def test_code_dir_name_falls_back_to_the_local_dir() -> None:
    spec = make_spec(code={"dir": "/src/my-code", "boot_file": "train.py"})
    assert container_paths(spec, ROOT).code_dir == ROOT / "modelarts/user-job-dir/my-code"


@pytest.mark.parametrize(("node", "nodes"), [(0, 1), (1, 2), (3, 4)])
def test_env_of_node_i_of_n(node: int, nodes: int) -> None:
    spec = make_spec(env={"OMP_NUM_THREADS": 2, "DEBUG": True})
    env = node_env(spec, container_paths(spec, ROOT), node=node, nodes=nodes, run_id="r1")
    assert env == {
        "MA_HOME": str(ROOT),
        "MA_MOUNT_PATH": f"{ROOT}/modelarts",
        "MA_JOB_DIR": f"{ROOT}/modelarts/user-job-dir",
        "MA_LOG_DIR": f"{ROOT}/modelarts/log",
        "WORKSPACE": f"{ROOT}/modelarts/user-job-dir/demo-code",
        "MA_CURRENT_IP": "127.0.0.1",
        "MA_NUM_GPUS": "0",
        "MA_TASK_NAME": "worker",
        "MA_NUM_HOSTS": str(nodes),
        "VC_TASK_INDEX": str(node),
        "VC_WORKER_NUM": str(nodes),
        "VC_WORKER_HOSTS": ",".join(["127.0.0.1"] * nodes),
        "MA_VJ_NAME": "modelarts-job-r1",
        "MA_CURRENT_INSTANCE_NAME": f"modelarts-job-r1-worker-{node}",
        "PYTHONUNBUFFERED": "1",
        "OMP_NUM_THREADS": "2",
        "DEBUG": "true",
    }


def test_env_values_that_are_container_paths_move_under_the_run_root() -> None:
    spec = make_spec(env={"CKPT": "/home/ma-user/runs/ckpt", "HOMEISH": "/home/ma-user2/x"})
    env = node_env(spec, container_paths(spec, ROOT), node=0, nodes=1, run_id="r1")
    assert env["CKPT"] == f"{ROOT}/runs/ckpt"
    assert env["HOMEISH"] == "/home/ma-user2/x"


def test_accelerators_come_from_the_flavor() -> None:
    spec = make_spec(
        image={"engine": "Ascend-Powered-Engine", "version": "pytorch-cann"},
        resources={"flavor": "modelarts.bm.snt9.xlarge.8", "nodes": 2},
        distributed={"backend": "hccl"},
    )
    env = node_env(spec, container_paths(spec, ROOT), node=0, nodes=2, run_id="r1")
    assert env["MA_NUM_GPUS"] == "8"


def test_single_node_args_have_channels_then_hyperparameters() -> None:
    spec = make_spec()
    args = script_args(spec, container_paths(spec, ROOT), node=0, nodes=1, master_port=1234)
    assert args == [
        f"--data_url={ROOT}/modelarts/inputs/data_url_0",
        f"--train_url={ROOT}/modelarts/outputs/train_url_0",
        "--epochs=3",
        "--lr=0.01",
        "--amp=true",
        "--arch=resnet 18",
    ]


def test_multi_node_preset_engine_gets_init_method_rank_world_size() -> None:
    spec = make_spec(resources={"flavor": "modelarts.vm.cpu.8u", "nodes": 3})
    paths = container_paths(spec, ROOT)
    for node in range(3):
        args = script_args(spec, paths, node=node, nodes=3, master_port=29555)
        assert args[-3:] == [
            "--init_method=tcp://127.0.0.1:29555",
            f"--rank={node}",
            "--world_size=3",
        ]


def test_env_access_method_moves_a_channel_from_args_to_env() -> None:
    spec = make_spec(
        inputs=[
            {"name": "data_url", "obs": "obs://bucket/data/", "access_method": "env"},
        ]
    )
    paths = container_paths(spec, ROOT)
    assert not any(
        a.startswith("--data_url") for a in script_args(spec, paths, node=0, nodes=1, master_port=1)
    )
    env = node_env(spec, paths, node=0, nodes=1, run_id="r")
    assert env["data_url"] == f"{ROOT}/modelarts/inputs/data_url_0"


def test_a_file_input_is_passed_as_the_file_inside_its_dir() -> None:
    spec = make_spec(inputs=[{"name": "data_url", "obs": "obs://bucket/data/digits.npz"}])
    args = script_args(spec, container_paths(spec, ROOT), node=0, nodes=1, master_port=1)
    assert args[0] == f"--data_url={ROOT}/modelarts/inputs/data_url_0/digits.npz"


def test_preset_engine_command_runs_the_boot_file_in_the_code_dir() -> None:
    spec = make_spec(resources={"flavor": "modelarts.vm.cpu.8u", "nodes": 2})
    command = node_command(
        spec,
        container_paths(spec, ROOT),
        node=1,
        nodes=2,
        run_id="r1",
        master_port=4000,
        python="/venv/bin/python",
    )
    assert command.name == "worker-1"
    assert command.cwd == ROOT / "modelarts/user-job-dir/demo-code"
    assert command.argv[:2] == (
        "/venv/bin/python",
        f"{ROOT}/modelarts/user-job-dir/demo-code/train.py",
    )
    assert command.argv[-2:] == ("--rank=1", "--world_size=2")
    assert command.env["VC_TASK_INDEX"] == "1"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        # The shell expands the variables; a container path variable is quoted.
        (
            "python ${MA_JOB_DIR}/code/train.py",
            """'/my venv/python' "${MA_JOB_DIR}"/code/train.py""",
        ),
        (
            "/home/ma-user/miniconda3/bin/python3.9 /home/ma-user/modelarts/user-job-dir/code/t.py",
            "'/my venv/python' /R/modelarts/user-job-dir/code/t.py",
        ),
        (
            "cd $WORKSPACE && python3 t.py --out=/home/ma-user/x",
            """cd "${WORKSPACE}" && '/my venv/python' t.py --out=/R/x""",
        ),
        (
            "bash /opt/home/ma-user/run.sh; ls /home/ma-user2",
            "bash /opt/home/ma-user/run.sh; ls /home/ma-user2",
        ),
        # Quoted text keeps its quoting: nothing expanded in '...', no extra quotes in "...".
        (
            """echo '$X ${WORKSPACE}' "$WORKSPACE" $HOME $PATH $1 $? python""",
            """echo '$X ${WORKSPACE}' "$WORKSPACE" $HOME $PATH $1 $? '/my venv/python'""",
        ),
        (
            """echo "python" 'python' x/python3 # python /home/ma-user""",
            """echo "python" 'python' '/my venv/python' # python /home/ma-user""",
        ),
    ],
)
def test_custom_command_is_rewritten_for_this_machine(command: str, expected: str) -> None:
    rewritten = container_command(
        command, root=Path("/R"), python="/my venv/python", path_vars=["MA_JOB_DIR", "WORKSPACE"]
    )
    assert rewritten == expected


@pytest.mark.parametrize(
    ("command", "words"),
    [
        ("printf '<%s>' /home/ma-user/a", ["{root}/a"]),
        ("""printf '<%s>' "x /home/ma-user/b" '/home/ma-user/c'""", ["x {root}/b", "{root}/c"]),
        ("""printf '<%s>' "$(printf %s "/home/ma-user/d")" "`printf %s /home/ma-user`" """,
         ["{root}/d", "{root}"]),
        ("""printf '<%s>' $WORKSPACE/e ${WORKSPACE} "${WORKSPACE}" '$WORKSPACE'""",
         ["{root}/ws/e", "{root}/ws", "{root}/ws", "$WORKSPACE"]),
    ],
)  # fmt: skip
def test_the_root_stays_one_word_in_every_quoting_context(
    command: str, words: list[str], tmp_path: Path
) -> None:
    root = tmp_path / "run dir" / "it's $HOME"
    line = container_command(command, root=root, python="python", path_vars=["WORKSPACE"])
    done = subprocess.run(
        ["/bin/sh", "-c", line],
        env={"WORKSPACE": f"{root}/ws", "PATH": os.environ["PATH"]},
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stdout == "".join(f"<{w.format(root=root)}>" for w in words)


def test_custom_image_runs_its_command_through_sh_with_the_arguments_appended() -> None:
    spec = make_spec(
        image={
            "swr": "swr.example.com/org/img:1",
            "command": "python ${MA_JOB_DIR}/demo-code/train.py",
        },
        resources={"flavor": "modelarts.vm.cpu.8u", "nodes": 2},
    )
    command = node_command(
        spec,
        container_paths(spec, ROOT),
        node=0,
        nodes=2,
        run_id="r1",
        master_port=4000,
        python="/usr/bin/python3",
    )
    assert command.argv[:2] == ("/bin/sh", "-c")
    words = shlex.split(command.argv[2])
    # The shell expands ${MA_JOB_DIR} from the node's environment; majob pastes nothing in.
    assert words[:2] == ["/usr/bin/python3", "${MA_JOB_DIR}/demo-code/train.py"]
    assert command.env["MA_JOB_DIR"] == f"{ROOT}/modelarts/user-job-dir"
    assert "--arch=resnet 18" in words  # quoted for the shell
    # The arguments come last: nothing of majob's runs after the user's command.
    assert words[-1] == "--arch=resnet 18"
    assert not any(w.startswith("--init_method") for w in words)  # a preset-engine feature


def test_values_from_the_environment_are_masked_in_the_shown_command() -> None:
    spec = make_spec(hyperparameters={"token": "s3cr3t-value", "epochs": 3}).with_from_environ(
        FromEnviron(frozenset({("hyperparameters", "token")}), frozenset({"s3cr3t-value"}))
    )
    for image in (None, {"swr": "swr.example.com/o/i:1", "command": "python train.py"}):
        custom = (
            spec.model_copy(update={"image": spec.image.model_validate(image)}) if image else spec
        )
        command = node_command(
            custom,
            container_paths(custom, ROOT),
            node=0,
            nodes=1,
            run_id="r1",
            master_port=1,
            python="python",
        )
        assert "--token=s3cr3t-value" in " ".join(command.argv)
        assert "s3cr3t-value" not in " ".join(command.shown)
        assert "--token=***" in " ".join(command.shown) and "--epochs=3" in " ".join(command.shown)

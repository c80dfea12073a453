from __future__ import annotations

import shlex
from pathlib import Path
from typing import Any

import pytest

from majob.runner.layout import (
    container_paths,
    expand_vars,
    local_command,
    node_command,
    node_env,
    script_args,
)
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


def test_expand_vars_behaves_like_a_shell() -> None:
    env = {"MA_JOB_DIR": "/j", "X": "1"}
    assert expand_vars("python ${MA_JOB_DIR}/code/train.py", env) == "python /j/code/train.py"
    assert expand_vars("$X-$X ${X}a $Xa", env) == "1-1 1a "  # $Xa is the unset variable Xa
    assert expand_vars("${UNSET}/x", env) == "/x"
    assert expand_vars("cost $5", env) == "cost $5"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        (
            "python ${MA_JOB_DIR}/code/train.py",
            "'/my venv/python' /R/modelarts/user-job-dir/code/train.py",
        ),
        (
            "/home/ma-user/miniconda3/bin/python3.9 /home/ma-user/modelarts/user-job-dir/code/t.py",
            "'/my venv/python' /R/modelarts/user-job-dir/code/t.py",
        ),
        (
            "cd ${WORKSPACE} && python3 t.py --out=/home/ma-user/x",
            "cd /R/ws && '/my venv/python' t.py --out=/R/x",
        ),
        (
            "bash /opt/home/ma-user/run.sh; ls /home/ma-user2",
            "bash /opt/home/ma-user/run.sh; ls /home/ma-user2",
        ),
    ],
)
def test_custom_command_is_rewritten_for_this_machine(command: str, expected: str) -> None:
    env = {"MA_JOB_DIR": "/R/modelarts/user-job-dir", "WORKSPACE": "/R/ws"}
    assert local_command(command, env, Path("/R"), "/my venv/python") == expected


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
    assert words[:2] == ["/usr/bin/python3", f"{ROOT}/modelarts/user-job-dir/demo-code/train.py"]
    assert "--arch=resnet 18" in words  # quoted for the shell
    assert not any(w.startswith("--init_method") for w in words)  # a preset-engine feature

"""What an emulated job's log says it stands in for and did not check, for each kind of job:
a preset engine on a CPU flavor (the Python versions compared), on a GPU flavor (its GPUs and
CUDA), an Ascend engine (NPUs and CANN), and a custom image (nothing of the image is known)."""

from __future__ import annotations

import platform
import sys
from typing import Any

from majob.container import EMULATOR_NOTE
from majob.emulator.modelarts.plan import check_body
from majob.emulator.modelarts.standin_notes import python_version, standin_notes

HERE = platform.python_version()


def _plan(engine: dict[str, Any], flavor: str, **algorithm: Any) -> Any:
    body = {
        "kind": "job",
        "metadata": {"name": "j1"},
        "algorithm": {"code_dir": "/bkt/code/", "engine": engine, **algorithm},
        "spec": {"resource": {"flavor_id": flavor, "node_count": 1}},
    }
    return check_body(body, None)


def test_this_interpreters_version_needs_no_process() -> None:
    assert python_version(sys.executable) == HERE


def test_a_preset_engine_on_a_cpu_flavor() -> None:
    plan = _plan(
        {
            "engine_name": "PyTorch",
            "engine_version": "pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64",
        },
        "modelarts.vm.cpu.8u",
        boot_file="/bkt/code/train.py",
    )
    stands_in, unchecked = standin_notes(plan, sys.executable)
    assert stands_in == (
        f"{EMULATOR_NOTE}stands in for engine PyTorch "
        "pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64 on flavor modelarts.vm.cpu.8u: "
        "the code runs on this machine, not in the image"
    )
    python = (
        f"the engine's exact Python 3.10.6 (the job ran on Python {HERE} here)"
        if HERE.startswith("3.10.")
        else f"Python 3.10.6 of the engine: the job ran on Python {HERE} here"
    )
    assert unchecked.startswith(f"{EMULATOR_NOTE}not checked: {python}")
    assert unchecked.endswith(
        "the image's packages and their versions, its user and its file system"
    )
    assert "GPU" not in unchecked


def test_a_gpu_flavor_names_its_gpus_and_cuda() -> None:
    plan = _plan(
        {
            "engine_name": "PyTorch",
            "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        },
        "modelarts.p3.large.public",
        boot_file="/bkt/code/train.py",
    )
    unchecked = standin_notes(plan, sys.executable)[1]
    assert "; the flavor's 1 GPU(s) and CUDA 10.2 (nothing ran on a GPU here); " in unchecked


def test_an_ascend_engine_names_the_npus_and_cann() -> None:
    plan = _plan(
        {
            "engine_name": "Ascend-Powered-Engine",
            "engine_version": "pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64",
        },
        "modelarts.bm.snt9.xlarge.8",
        boot_file="/bkt/code/train.py",
    )
    assert (
        "; the flavor's 8 Ascend NPU(s) and CANN 8.0.rc1; "
        in standin_notes(plan, sys.executable)[1]
    )


def test_a_custom_image_is_not_looked_into() -> None:
    plan = _plan(
        {"image_url": "my-org/train:1"},
        "modelarts.vm.cpu.8u",
        command="python /home/ma-user/modelarts/user-job-dir/code/train.py",
    )
    stands_in, unchecked = standin_notes(plan, sys.executable)
    assert stands_in.startswith(f"{EMULATOR_NOTE}stands in for custom image my-org/train:1 on ")
    assert unchecked == (
        f"{EMULATOR_NOTE}not checked: the image's Python (the job ran on Python {HERE} here); "
        "what the image holds (its Python, packages and user) and its command's tools"
    )

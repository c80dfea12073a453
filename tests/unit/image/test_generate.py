from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from majob.errors import UserInputError
from majob.image.dockerfile import parse_dockerfile
from majob.image.generate import (
    default_base,
    find_requirements,
    render_dockerfile,
    render_image_block,
)
from majob.image.lint import lint_dockerfile
from majob.image.localenv import LocalEnv, ThirdParty
from majob.spec.models import JobSpec

CPU = LocalEnv(
    python="3.11.7",
    machine="x86_64",
    executable="/usr/bin/python3",
    torch="2.13.0+cpu",
    cuda=None,
    third_party=(
        ThirdParty("numpy", True, (("numpy", "2.1.0"),)),
        ThirdParty("cv2", True, (("opencv-python", "4.10.0"),)),
        ThirdParty("torch", True, (("torch", "2.13.0+cpu"),)),
        ThirdParty("gone", False, ()),
    ),
)
GPU = dataclasses.replace(CPU, torch="2.1.0+cu121", cuda="12.1")


def spec(code_dir: Path) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": "My-Job",
            "code": {"dir": str(code_dir), "boot_file": "train.py", "obs": "obs://bucket/x/src/"},
            "image": {
                "engine": "PyTorch",
                "version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
            },
            "resources": {"flavor": "modelarts.vm.cpu.8u"},
        }
    )


def test_bases_match_the_local_versions() -> None:
    assert default_base(CPU) == "python:3.11-slim"
    assert default_base(GPU) == "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"
    older = dataclasses.replace(GPU, torch="1.8.1+cu102", cuda="10.2")
    assert default_base(older) == "pytorch/pytorch:1.8.1-cuda10.2-cudnn7-runtime"
    newer = dataclasses.replace(GPU, torch="2.4.0+cu124", cuda="12.4")
    assert default_base(newer) == "pytorch/pytorch:2.4.0-cuda12.4-cudnn9-runtime"
    with pytest.raises(UserInputError, match="Ascend image needs a CANN base"):
        default_base(dataclasses.replace(CPU, torch_npu="2.1.0"))


def test_requirements_file_in_the_code_dir_wins(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\n")
    (tmp_path / "pyproject.toml").write_text("[project]\nname='x'\ndependencies=['pandas']\n")
    found = find_requirements(spec(tmp_path), tmp_path, CPU)
    assert found.file == tmp_path / "requirements.txt" and found.pins == ()


def test_pyproject_dependencies_without_torch(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname='x'\ndependencies=['torch>=2', 'pandas>=2', 'torchvision']\n"
    )
    found = find_requirements(spec(tmp_path), tmp_path, CPU)
    assert (found.file, found.pins) == (None, ("pandas>=2",))


def test_without_files_the_imports_are_pinned(tmp_path: Path) -> None:
    found = find_requirements(spec(tmp_path), tmp_path, CPU)
    assert found.pins == ("numpy==2.1.0", "opencv-python==4.10.0")


def test_cpu_dockerfile_layers_and_lint(tmp_path: Path) -> None:
    text = render_dockerfile(CPU, find_requirements(spec(tmp_path), tmp_path, CPU))
    names = [(i.name, i.value.split()[0]) for i in parse_dockerfile(text)]
    assert names == [
        ("FROM", "python:3.11-slim"),
        ("RUN", "pip"),  # PyTorch
        ("RUN", "pip"),  # other packages
        ("RUN", "(getent"),  # ma-user
        ("ENV", "PYTHONUNBUFFERED=1"),
        ("ENV", "HOME=/home/ma-user"),
        ("WORKDIR", "/home/ma-user"),
        ("USER", "ma-user"),
    ]
    assert "torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu" in text
    assert "useradd -m -u 1000 -g 100" in text
    assert lint_dockerfile(text) == []


def test_gpu_dockerfile_copies_only_the_requirements(tmp_path: Path) -> None:
    (tmp_path / "requirements.txt").write_text("numpy\n")
    text = render_dockerfile(GPU, find_requirements(spec(tmp_path), tmp_path, GPU))
    assert text.count("COPY") == 1 and "COPY requirements.txt /tmp/requirements.txt" in text
    assert "torch==" not in text  # the official PyTorch base has it
    assert lint_dockerfile(text) == []


def test_a_given_base_is_used_as_is(tmp_path: Path) -> None:
    text = render_dockerfile(CPU, find_requirements(spec(tmp_path), tmp_path, CPU), "my/base:1")
    assert "FROM my/base:1" in text and "download.pytorch.org" not in text


def test_image_block_runs_the_boot_file_from_the_code_dir(tmp_path: Path) -> None:
    assert render_image_block(spec(tmp_path), "swr.x/org/img:1") == (
        "image:\n  swr: swr.x/org/img:1\n  command: python ${MA_JOB_DIR}/src/train.py\n  uid: 1000\n"
    )


def _gpu_job(code_dir: Path, **changes: object) -> JobSpec:
    data = spec(code_dir).model_dump(exclude_none=True)
    data["image"]["version"] = "pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64"
    data["resources"] = {"flavor": "modelarts.p3.large.public", "nodes": 2}
    data.update(changes)
    return JobSpec.model_validate(data)


def test_a_gpu_job_is_refused_a_cpu_base(tmp_path: Path) -> None:
    # The issue: FROM python:3.11-slim with the CPU wheel for a GPU flavor and nccl, silently.
    job = _gpu_job(tmp_path)
    with pytest.raises(UserInputError) as caught:
        render_dockerfile(CPU, find_requirements(job, tmp_path, CPU), spec=job)
    assert caught.value.message == (
        "flavor modelarts.p3.large.public has GPUs, but torch here is a CPU build (2.13.0+cpu): "
        "a Dockerfile matching this environment would install the CPU wheel, on which CUDA "
        "and nccl fail"
    )
    assert caught.value.hint is not None
    assert caught.value.hint.startswith(
        "pass --base with a CUDA image, the engine's GPU image "
        "swr.cn-north-4.myhuaweicloud.com/modelarts-job-dev-image/"
        "pytorch_2.1.0-cuda_12.1-py_3.10.6-ubuntu_22.04-x86_64 (its address varies by region)"
    )
    nccl_on_cpu = _gpu_job(
        tmp_path, resources={"flavor": "modelarts.vm.cpu.8u"}, distributed={"backend": "nccl"}
    )
    with pytest.raises(UserInputError, match="the spec's distributed backend is nccl"):
        default_base(CPU, nccl_on_cpu)


def test_a_gpu_job_gets_a_cuda_base_or_the_one_given(tmp_path: Path) -> None:
    job = _gpu_job(tmp_path)
    assert default_base(GPU, job) == "pytorch/pytorch:2.1.0-cuda12.1-cudnn8-runtime"
    given = render_dockerfile(CPU, find_requirements(job, tmp_path, CPU), "my/cuda:1", job)
    assert "FROM my/cuda:1\n" in given
    assert "download.pytorch.org/whl/cpu" not in given
    # A CPU job keeps the slim base and the CPU wheel.
    assert default_base(CPU, spec(tmp_path)) == "python:3.11-slim"

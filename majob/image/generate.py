"""Write a layered Dockerfile for a custom ModelArts image matching the local environment, and
the spec's ``image`` block that runs it.

Layers follow the guide's order, the rarely changing ones first: the official base (OS, CUDA,
Python, PyTorch), then the project's requirements, then the ``ma-user`` account (uid 1000,
gid 100) ModelArts runs custom images as. Neither code nor data is copied in: ModelArts
downloads the code from OBS at start and reads data from OBS inputs. The output passes
``majob image lint``.

Bases: with a CUDA build of torch, ``pytorch/pytorch:<torch>-cuda<X.Y>-cudnn<N>-runtime``
(Docker Hub's official PyTorch image, whose Python is the one it ships); otherwise
``python:<X.Y>-slim`` with the CPU wheel of the same torch. ``--base`` overrides both (e.g.
an official ModelArts or Ascend CANN image). A job that needs GPUs (a GPU flavor, or the nccl
backend) is refused a CPU base: the CPU wheel cannot start nccl, and nothing would say so
before the job failed; ``--base`` with a CUDA image, or a CUDA build of torch here, is needed.
"""

from __future__ import annotations

import importlib
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

from majob.container import HOME
from majob.errors import UserInputError
from majob.image.engine_ids import version_key
from majob.image.localenv import TORCH_FAMILY, LocalEnv
from majob.spec.catalog import ENGINES, catalogue_flavor
from majob.spec.models import JobSpec

SWR_DEFAULT_REGION = "cn-north-4"
_TORCH_REQ = re.compile(r"^\s*(torch|torchvision|torchaudio|torch[-_]npu)\b", re.IGNORECASE)


@dataclass(frozen=True)
class Requirements:
    """Where the packages come from: a requirements file copied in, or inline pins."""

    source: str  # what to tell the user: the file, pyproject.toml, or "the code's imports"
    file: Path | None  # a requirements file to COPY (relative to the build context)
    pins: tuple[str, ...]  # inline requirements when there is no file


def find_requirements(spec: JobSpec, spec_dir: Path, local: LocalEnv) -> Requirements:
    """requirements.txt in the code dir or beside the spec, else pyproject.toml's
    ``[project].dependencies``, else the code's third-party imports pinned to local versions."""
    code_dir = Path(spec.code.dir)
    for directory in (code_dir, spec_dir):
        candidate = directory / "requirements.txt"
        if candidate.is_file():
            return Requirements(str(candidate), candidate, ())
    for directory in (code_dir, spec_dir):
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            dependencies = _pyproject_dependencies(pyproject)
            if dependencies is not None:
                kept = tuple(d for d in dependencies if not _TORCH_REQ.match(d))
                return Requirements(str(pyproject), None, kept)
    pins = tuple(
        sorted(
            t.requirement
            for t in local.third_party
            if t.found and t.module not in TORCH_FAMILY and t.requirement
        )
    )
    return Requirements("the code's imports, pinned to the versions here", None, pins)


def _pyproject_dependencies(path: Path) -> list[str] | None:
    try:  # imported by name: mypy checks for Python 3.10, which has no tomllib
        tomllib = importlib.import_module("tomllib")
    except ImportError:  # Python 3.10: no TOML reader in the standard library
        return None
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as error:
        raise UserInputError(f"{path}: cannot read it ({error})") from None
    dependencies = data.get("project", {}).get("dependencies")
    return [str(d) for d in dependencies] if isinstance(dependencies, list) else None


def gpu_need(spec: JobSpec) -> str | None:
    """Why the spec's job needs GPUs (its flavor has some, or it names the nccl backend)."""
    flavor = catalogue_flavor(spec.resources.flavor)
    if flavor is not None and (flavor.type == "GPU" or flavor.gpu):
        return f"flavor {flavor.id} has GPUs"
    if spec.distributed is not None and spec.distributed.backend == "nccl":
        return "the spec's distributed backend is nccl (GPUs only)"
    return None


def default_base(local: LocalEnv, spec: JobSpec | None = None) -> str:
    """The official image matching the local Python/PyTorch/CUDA (see the module docstring);
    a ``UserInputError`` when ``spec``'s job needs GPUs and torch here is no CUDA build."""
    needs = gpu_need(spec) if spec is not None else None
    if needs and local.cuda is None and local.torch_npu is None:
        built = f"a CPU build ({local.torch})" if local.torch else "not installed"
        raise UserInputError(
            f"{needs}, but torch here is {built}: a Dockerfile matching this environment "
            "would install the CPU wheel, on which CUDA and nccl fail",
            hint=f"pass --base with a CUDA image, {_cuda_bases(spec)}; or --python with an "
            "interpreter whose torch is a CUDA build",
        )
    if local.torch_npu is not None:
        raise UserInputError(
            "torch_npu here: an Ascend image needs a CANN base that matches the NPU driver",
            hint="pass --base with the official Ascend PyTorch image of your region",
        )
    python = ".".join(str(n) for n in version_key(local.python)[:2])
    if local.cuda is None or local.torch_release is None:
        return f"python:{python}-slim"
    # Docker Hub's tags: cuDNN 7 with CUDA 10, 8 with CUDA 11-12 up to torch 2.3, 9 from 2.4.
    if version_key(local.cuda)[:1] == (10,):
        cudnn = 7
    else:
        cudnn = 9 if version_key(local.torch_release) >= (2, 4) else 8
    return f"pytorch/pytorch:{local.torch_release}-cuda{local.cuda}-cudnn{cudnn}-runtime"


def _cuda_bases(spec: JobSpec | None) -> str:
    """Examples of a CUDA base for ``spec``: its preset engine's GPU image, when it names one."""
    example = "e.g. pytorch/pytorch:<torch>-cuda<X.Y>-cudnn<N>-runtime"
    image = spec.image if spec is not None else None
    if image is None or image.version is None:
        return example
    engine = next((e for e in ENGINES if e.version == image.version and e.image), None)
    if engine is None or "cuda" not in engine.version:
        return example
    return f"the engine's GPU image {engine.image} (its address varies by region), or {example}"


def render_dockerfile(
    local: LocalEnv,
    requirements: Requirements,
    base: str | None = None,
    spec: JobSpec | None = None,
) -> str:
    """The Dockerfile text (ends with a newline); ``spec`` lets a GPU job refuse a CPU base."""
    chosen = base or default_base(local, spec)
    official_torch = chosen.startswith("pytorch/pytorch:")
    lines = [
        "# syntax=docker/dockerfile:1",
        "# Custom ModelArts training image, written by `majob image dockerfile`.",
        f"# Matches the environment of {local.executable}: Python {local.python}"
        + (f", PyTorch {local.torch}" if local.torch else "")
        + (f", CUDA {local.cuda}" if local.cuda else "")
        + ".",
        "# Layers go from rarely to often changing (OS, CUDA, Python, PyTorch, packages).",
        "# No code or data inside: ModelArts downloads the code from OBS at start.",
        "",
        "# "
        + ("OS, CUDA, Python and PyTorch" if official_torch else "OS and Python")
        + ": the base.",
        *(
            [
                "# It ships its own Python: check it is "
                f"{'.'.join(local.python.split('.')[:2])} (docker run IMAGE python --version).",
            ]
            if official_torch
            else []
        ),
        f"FROM {chosen}",
        "",
    ]
    if local.torch_release and not official_torch and base is None:
        index = "cpu" if local.cuda is None else "cu" + local.cuda.replace(".", "")
        lines += [
            "# PyTorch, pinned to the version here.",
            f"RUN pip install --no-cache-dir torch=={local.torch_release} "
            f"--index-url https://download.pytorch.org/whl/{index}",
            "",
        ]
    lines += _requirement_lines(requirements)
    lines += [
        "# The user ModelArts runs custom images as: uid 1000 (ma-user), gid 100.",
        f"RUN (getent group 100 || groupadd -g 100 ma-group) && useradd -m -u 1000 -g 100 "
        f"-d {HOME} -s /bin/bash ma-user",
        "ENV PYTHONUNBUFFERED=1",
        f"ENV HOME={HOME}",
        f"WORKDIR {HOME}",
        "USER ma-user",
    ]
    return "\n".join(lines) + "\n"


def _requirement_lines(requirements: Requirements) -> list[str]:
    if requirements.file is not None:
        return [
            f"# Other packages, from {requirements.file.name}.",
            f"COPY {requirements.file.name} /tmp/requirements.txt",
            "RUN pip install --no-cache-dir -r /tmp/requirements.txt && rm /tmp/requirements.txt",
            "",
        ]
    if not requirements.pins:
        return []
    pins = " \\\n    ".join(shlex.quote(p) for p in requirements.pins)
    return [
        f"# Other packages, from {requirements.source}.",
        f"RUN pip install --no-cache-dir \\\n    {pins}",
        "",
    ]


def default_swr(spec: JobSpec, local: LocalEnv) -> str:
    tag = local.torch_release or local.python
    return f"swr.{SWR_DEFAULT_REGION}.myhuaweicloud.com/ORGANIZATION/{spec.name.lower()}:{tag}"


def render_image_block(spec: JobSpec, swr: str) -> str:
    """The spec's ``image:`` block for the built image: SWR address and boot command."""
    boot = f"${{MA_JOB_DIR}}/{spec.code_dir_name()}/{spec.code.boot_file}"
    return f"image:\n  swr: {swr}\n  command: python {boot}\n  uid: 1000\n"

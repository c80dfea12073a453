"""What an emulated job does not prove: the engine or image it stands in for, and what of it the
emulator did not check.

The emulator runs a job's code on this machine, with this machine's Python and packages; the real
job runs in the engine's image (its Python, its PyTorch, CUDA or CANN, its user). A job that
completes here can fail there, so its log says so, in lines marked ``EMULATOR_NOTE`` that the
pipeline repeats in its summary.
"""

from __future__ import annotations

import functools
import platform
import re
import subprocess
import sys

from majob.container import EMULATOR_NOTE
from majob.emulator.modelarts.plan import JobPlan

_PYTHON = re.compile(r"(?:^|-)py_(\d+(?:\.\d+)*)")
_CUDA = re.compile(r"(?:^|-)cuda_(\d+(?:\.\d+)*)")
_CANN = re.compile(r"(?:^|-)cann_([0-9][0-9a-z.]*)")


@functools.cache
def python_version(python: str) -> str:
    """The version of the interpreter ``python`` (``unknown`` when it cannot be asked)."""
    if python == sys.executable:
        return platform.python_version()
    try:
        done = subprocess.run(
            [python, "-c", "import platform; print(platform.python_version())"],
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return done.stdout.strip() or "unknown"


def _minor(version: str) -> str:
    return ".".join(version.split(".")[:2])


def standin_notes(plan: JobPlan, python: str) -> list[str]:
    """The lines (each starting with ``EMULATOR_NOTE``) the job's log gets before it starts."""
    here = python_version(python)
    engine, image = plan.engine, plan.launch.image_url
    if engine is not None:
        version = engine.engine_version
        what = f"engine {engine.engine_name} {version}"
        found = _PYTHON.search(version)
        theirs = found.group(1) if found else None
    else:
        what, theirs = f"custom image {image}", None
    on = f"{what} on flavor {plan.flavor.flavor_id}"
    unchecked = [_python_line(here, theirs), *_accelerator(plan)]
    unchecked.append(
        "the image's packages and their versions, its user and its file system"
        if engine is not None
        else "what the image holds (its Python, packages and user) and its command's tools"
    )
    return [
        f"{EMULATOR_NOTE}stands in for {on}: the code runs on this machine, not in the image",
        f"{EMULATOR_NOTE}not checked: " + "; ".join(unchecked),
    ]


def _python_line(here: str, theirs: str | None) -> str:
    if theirs is None:
        return f"the image's Python (the job ran on Python {here} here)"
    if _minor(here) == _minor(theirs):
        return f"the engine's exact Python {theirs} (the job ran on Python {here} here)"
    return (
        f"Python {theirs} of the engine: the job ran on Python {here} here, so code or "
        f"packages that need Python {_minor(here)} may fail there"
    )


def _accelerator(plan: JobPlan) -> list[str]:
    version = plan.engine.engine_version if plan.engine is not None else ""
    cards = plan.flavor.accelerators
    if plan.flavor.flavor_type == "GPU":
        cuda = _CUDA.search(version)
        toolkit = f" and CUDA {cuda.group(1)}" if cuda else " and CUDA"
        return [f"the flavor's {cards} GPU(s){toolkit} (nothing ran on a GPU here)"]
    if plan.is_ascend:
        cann = _CANN.search(version)
        toolkit = f" and CANN {cann.group(1)}" if cann else " and CANN"
        return [f"the flavor's {cards} Ascend NPU(s){toolkit}"]
    return []

"""Where the body puts things in the container: ``algorithm.local_code_dir``,
``algorithm.working_dir`` and each channel's ``local_dir`` (reference modelarts.md §2.3, §3.2).

The console's help for them (ModelArts "local code directory" and "working directory"): the
code dir's last directory is downloaded under ``local_code_dir`` (default
``/home/ma-user/modelarts/user-job-dir``), which may not lie under ``/home/ma-user/modelarts/``,
``/home/ma-user/modelarts-dev/`` or ``/home/ma-user/infer/``; the job starts in ``working_dir``
(a container path). A channel's ``local_dir`` is where it is downloaded to (inputs) or read from
(outputs) instead of ``/home/ma-user/modelarts/<inputs|outputs>/<name>_0``. The emulator takes
container paths under ``/home`` only: that is the part of the container it lays out on disk.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from majob.emulator.modelarts.errors import bad_request
from majob.emulator.modelarts.jsonbody import text

HOME_ROOT = PurePosixPath("/home")
RESERVED = tuple(
    PurePosixPath(p)
    for p in ("/home/ma-user/modelarts", "/home/ma-user/modelarts-dev", "/home/ma-user/infer")
)


@dataclass(frozen=True)
class Placement:
    """The body's own container paths for the code and the working dir (None: the default)."""

    local_code_dir: PurePosixPath | None = None
    working_dir: PurePosixPath | None = None


def container_path(value: str, where: str) -> PurePosixPath:
    """An absolute container path with no ``..``: refused otherwise. Not only under ``/home``:
    algorithms made from older images put their channels in a top-level directory outside it
    (ModelArts FAQ on the two hyperparameter directories of training jobs)."""
    path = PurePosixPath(value)
    if not path.is_absolute() or ".." in path.parts:
        raise bad_request(
            f"{where} {value!r} is not an absolute container path",
            "give a container path such as /home/ma-user/work",
        )
    if path in (PurePosixPath("/"), HOME_ROOT):
        raise bad_request(f"{where} may not be {path} itself")
    return path


def read_placement(algorithm: dict[str, Any]) -> Placement:
    """The ``local_code_dir`` and ``working_dir`` of a body's ``algorithm``, checked."""
    code_text = text(algorithm.get("local_code_dir"), "algorithm.local_code_dir")
    work_text = text(algorithm.get("working_dir"), "algorithm.working_dir")
    code = container_path(code_text, "algorithm.local_code_dir") if code_text else None
    if code is not None and any(code.is_relative_to(r) for r in RESERVED):
        raise bad_request(
            f"algorithm.local_code_dir {code} is under a directory ModelArts keeps for itself",
            "use a directory outside /home/ma-user/modelarts/, /home/ma-user/modelarts-dev/ and "
            "/home/ma-user/infer/",
        )
    work = container_path(work_text, "algorithm.working_dir") if work_text else None
    return Placement(code, work)

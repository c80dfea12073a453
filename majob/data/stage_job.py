"""``majob data stage``'s transfer job: a one-node job on the pool that mounts the SFS Turbo
share and runs majob's copy engine (``stage_main``) in its container.

The destination is written ``sfs://SERVER/PATH``: the share's root ``SERVER:/`` is mounted at
``MOUNT`` (a root always exists; a folder must be created before SFS Turbo mounts it) and the
data lands in ``MOUNT/PATH``, which a later job mounts as ``volumes: [{nfs: SERVER:/PATH}]``.
The job's code folder is a copy of the majob modules the engine imports (``SHIPPED``) and the
boot file ``stage_boot.py``: the image needs Python 3.10+ and the engine's libraries
(``stage_boot.REQUIRED``), not majob. It reads OBS with the job's agency credentials; the
user's keys never enter the job.
"""

from __future__ import annotations

import re
import shutil
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from majob.errors import UserInputError
from majob.storage.uri import ObsUri

MOUNT = "/mnt/majob-stage"
BOOT_FILE = "majob_stage.py"
# The packages and modules of majob the copy engine imports (stage_boot checks it at run time).
SHIPPED = (
    "__init__.py",
    "data",
    "storage",
    "display.py",
    "errors.py",
    "masking.py",
    "retry.py",
    "text.py",
    "version.py",
    "py.typed",
)
_SERVER = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?$")
_PROGRESS = re.compile(r"majob-stage: files=(\d+)/(\d+) bytes=(\d+)/(\d+)")
_DONE = re.compile(r"majob-stage-done: files=(\d+) bytes=(\d+) digest=([0-9a-f]+)")


@dataclass(frozen=True)
class SfsTarget:
    """``sfs://SERVER/PATH``: a folder of an SFS Turbo share."""

    server: str
    path: PurePosixPath  # absolute, on the share

    @classmethod
    def parse(cls, text: str) -> SfsTarget:
        example = "e.g. sfs://192.168.0.169/datasets/imagenet"
        if not text.startswith("sfs://"):
            raise UserInputError(f"{text!r} is not an SFS Turbo folder", hint=f"write {example}")
        server, _, rest = text[len("sfs://") :].partition("/")
        path = PurePosixPath("/" + rest.strip("/"))
        if not _SERVER.match(server):
            raise UserInputError(f"{text!r} names no server", hint=f"write {example}")
        if path == PurePosixPath("/") or ".." in path.parts:
            raise UserInputError(
                f"{text!r} has no path part: staging into the share's root would mix the data "
                "with everything else on it",
                hint=f"name a folder of its own, {example}",
            )
        return cls(server, path)

    @property
    def uri(self) -> str:
        return f"sfs://{self.server}{self.path}"

    @property
    def nfs(self) -> str:
        """What a job's ``volumes:`` mounts to read the staged data."""
        return f"{self.server}:{self.path}"

    @property
    def in_container(self) -> str:
        return str(PurePosixPath(MOUNT).joinpath(*self.path.parts[1:]))


def ship_code(folder: Path) -> Path:
    """Write the transfer job's code folder into ``folder``: the boot file and majob's copy
    engine with what it imports (no bytecode)."""
    package = Path(__file__).resolve().parent.parent
    shipped = folder / "majob"
    shipped.mkdir(parents=True, exist_ok=True)
    for name in SHIPPED:
        source = package / name
        if source.is_dir():
            shutil.copytree(
                source, shipped / name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc")
            )
        elif source.exists():
            shutil.copy2(source, shipped / name)
    shutil.copy2(Path(__file__).with_name("stage_boot.py"), folder / BOOT_FILE)
    return folder


def stage_spec_data(
    source: ObsUri,
    target: SfsTarget,
    *,
    code_dir: Path,
    pool: str,
    flavor: str | None,
    endpoint: str,
    jobs: int,
    engine: tuple[str, str],
) -> dict[str, Any]:
    """The transfer job as a spec (``JobSpec.model_validate`` checks it like a user's)."""
    work = ObsUri(source.bucket, "majob-stage/")
    name = "majob-stage-" + re.sub(r"[^a-z0-9-]+", "-", target.path.name.lower()).strip("-")
    resources: dict[str, Any] = {"pool": pool, "nodes": 1}
    if flavor:
        resources["flavor"] = flavor
    return {
        "name": name[:64].rstrip("-") or "majob-stage",
        "description": f"majob data stage {source.uri} -> {target.uri}",
        "code": {"dir": str(code_dir), "boot_file": BOOT_FILE, "obs": work.join("code/").uri},
        "image": {"engine": engine[0], "version": engine[1]},
        "resources": resources,
        "volumes": [{"nfs": f"{target.server}:/", "mount": MOUNT, "read_only": False}],
        "hyperparameters": {
            "source": source.as_dir().uri,
            "dest": target.in_container,
            "jobs": jobs,
            "endpoint": endpoint,
        },
        "log": work.join("logs/").uri,
    }


@dataclass
class StageProgress:
    """What the transfer job's log said so far."""

    files: int = 0
    total_files: int = 0
    bytes: int = 0
    total_bytes: int = 0
    digest: str = ""  # set by the done line: the copy is complete and verified
    errors: tuple[str, ...] = ()
    summary: str = ""  # the engine's "staged ...: copied N, kept M" line

    def read(self, line: str) -> bool:
        """Take one log line; whether it moved the progress."""
        if (found := _PROGRESS.search(line)) is not None:
            self.files, self.total_files, self.bytes, self.total_bytes = map(int, found.groups())
            return True
        if (done := _DONE.search(line)) is not None:
            self.files, self.bytes = int(done[1]), int(done[2])
            self.total_files, self.total_bytes, self.digest = self.files, self.bytes, done[3]
            return True
        text = line.split("] ", 1)[-1] if line.startswith("[") else line
        if text.startswith("staged obs://") or ": unchanged, " in text:
            self.summary = text
        elif text.startswith("error: "):
            self.errors = (*self.errors, text[len("error: ") :])
        return False

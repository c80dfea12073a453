"""What the local environment holds: the Python a script runs on, its torch build, and the
third-party modules the training code imports (found with ``ast``, never by importing).

The interpreter is asked in a subprocess (``--python`` may name another one, e.g. a conda
env's), and torch is not imported there either: its version comes from the package metadata and
its CUDA version from ``torch/version.py``, read as text, so the probe takes a few tens of
milliseconds instead of the seconds ``import torch`` costs.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from majob.errors import UserInputError

# Run by the probed interpreter: standard library only, and valid on Python 3.6+.
_PROBE = r"""
import json, os, platform, sys
try:
    import importlib.metadata as md
except ImportError:
    md = None
import importlib.util

def version(name):
    if md is None:
        return None
    try:
        return md.version(name)
    except Exception:
        return None

cuda = None
spec = importlib.util.find_spec("torch")
if spec is not None and spec.submodule_search_locations:
    path = os.path.join(list(spec.submodule_search_locations)[0], "version.py")
    for line in open(path, encoding="utf-8") if os.path.exists(path) else ():
        if line.startswith("cuda") and "=" in line:
            value = line.split("=", 1)[1].split("#")[0].strip()
            cuda = None if value in ("None", "") else value.strip("'\"")
stdlib = set(getattr(sys, "stdlib_module_names", ()))
dists = {}
# Reading every distribution's file list takes seconds in a large environment: only when asked.
if sys.argv[1:] and md is not None and hasattr(md, "packages_distributions"):
    dists = md.packages_distributions()
modules = {}
for name in sys.argv[1:]:
    if name in stdlib or name in sys.builtin_module_names:
        continue
    try:
        found = importlib.util.find_spec(name) is not None
    except Exception:
        found = False
    names = sorted(set(dists.get(name, [])))
    modules[name] = {"found": found, "dists": [[d, version(d)] for d in names]}
print(json.dumps({
    "python": platform.python_version(),
    "machine": platform.machine(),
    "executable": sys.executable,
    "torch": version("torch"),
    "cuda": cuda,
    "torch_npu": version("torch_npu") or version("torch-npu"),
    "modules": modules,
}))
"""

_SKIP_DIRS = frozenset({".git", "__pycache__", ".venv", "venv", "env", "node_modules", ".tox"})
TORCH_FAMILY = frozenset({"torch", "torchvision", "torchaudio", "torch_npu"})


@dataclass(frozen=True)
class ThirdParty:
    """A third-party module the code imports, and the distributions that provide it here."""

    module: str
    found: bool  # importable by the probed interpreter
    dists: tuple[tuple[str, str | None], ...]  # (distribution, version)

    @property
    def requirement(self) -> str | None:
        """A pinned requirement line for it, when the distribution is known."""
        if not self.dists:
            return None
        name, version = self.dists[0]
        return f"{name}=={version}" if version else name


@dataclass(frozen=True)
class LocalEnv:
    python: str  # e.g. 3.11.7
    machine: str  # platform.machine(): x86_64, aarch64, arm64
    executable: str
    torch: str | None  # e.g. 2.1.0+cu121
    cuda: str | None  # torch.version.cuda; None for a CPU build
    torch_npu: str | None = None
    third_party: tuple[ThirdParty, ...] = field(default_factory=tuple)

    @property
    def torch_release(self) -> str | None:
        """torch's version without the local build tag (``2.1.0+cu121`` → ``2.1.0``)."""
        return self.torch.split("+")[0] if self.torch else None

    @property
    def arch(self) -> str:
        return {"arm64": "aarch64", "amd64": "x86_64", "AMD64": "x86_64"}.get(
            self.machine, self.machine
        )

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def imported_modules(code_dir: str | Path) -> list[str]:
    """Top-level names of the absolute imports under ``code_dir``, minus its own modules."""
    root = Path(code_dir)
    names: set[str] = set()
    local: set[str] = set()
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs if d not in _SKIP_DIRS and not d.startswith(".")]
        local.update(subdirs)
        for file in files:
            if not file.endswith(".py"):
                continue
            local.add(file[:-3])
            path = Path(directory, file)
            try:
                tree = ast.parse(path.read_bytes(), filename=str(path))
            except (SyntaxError, ValueError, OSError):
                continue  # `majob check` reports unparsable files; here they add nothing
            for node in ast.walk(tree):
                if isinstance(node, ast.Import):
                    names.update(alias.name.split(".")[0] for alias in node.names)
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names.add(node.module.split(".")[0])
    return sorted(names - local - {"__future__"})


def probe(python: str | None, modules: list[str]) -> LocalEnv:
    """Ask the interpreter ``python`` (default: this one) what it has; ``modules`` are the
    imports to look up. Raise ``UserInputError`` if it cannot be run."""
    executable = python or sys.executable
    try:
        done = subprocess.run(
            [executable, "-c", _PROBE, *modules],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise UserInputError(
            f"--python {executable}: cannot run it ({error})",
            hint="give the interpreter your training script runs on, e.g. ~/miniconda3/bin/python",
        ) from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or ["no output"])[-1]
        raise UserInputError(f"--python {executable}: the probe failed: {last}")
    data = json.loads(done.stdout)
    third_party = tuple(
        ThirdParty(
            module=name,
            found=bool(info["found"]),
            dists=tuple((d, v) for d, v in info["dists"]),
        )
        for name, info in sorted(data["modules"].items())
    )
    return LocalEnv(
        python=data["python"],
        machine=data["machine"],
        executable=data["executable"],
        torch=data["torch"],
        cuda=data["cuda"],
        torch_npu=data["torch_npu"],
        third_party=third_party,
    )

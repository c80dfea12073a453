"""What a RUN command installs, by kind, in the order a Dockerfile's layers should take them.

The guide orders layers from the rarely changing to the often changing: OS packages, CUDA,
Python, PyTorch, other packages; ``steps_of`` tells which of those a command performs.
"""

from __future__ import annotations

import re
from enum import IntEnum


class Step(IntEnum):
    """What a RUN installs, in the order the guide wants the layers (rarely changing first)."""

    OS = 0
    CUDA = 1
    PYTHON = 2
    PYTORCH = 3
    PACKAGES = 4

    @property
    def label(self) -> str:
        return {0: "OS packages", 1: "CUDA", 2: "Python", 3: "PyTorch", 4: "other packages"}[
            self.value
        ]


# The commands that install, for the patterns here and the cache rules of ``lint``.
INSTALLER = r"(?:apt-get|apt|yum|dnf|apk|zypper|microdnf)"
PIP_INSTALL = r"(?:pip3?(?:\.\d+)?|python3?(?:\.\d+)?\s+-m\s+pip|uv\s+pip)\s+install"
CONDA_INSTALL = r"(?:conda|mamba|micromamba)\s+install"
_PATTERNS: dict[Step, re.Pattern[str]] = {
    Step.OS: re.compile(rf"\b{INSTALLER}\s+(?:-\S+\s+)*(?:install|update|upgrade|add)\b"),
    Step.CUDA: re.compile(
        rf"\b(?:{INSTALLER}|{CONDA_INSTALL})\b[^;&|]*\b(?:cuda|cudnn|libcudnn\S*|libnccl\S*|cudatoolkit)"
    ),
    Step.PYTHON: re.compile(
        rf"(?:\b{INSTALLER}\s+(?:-\S+\s+)*(?:install|add)\b[^;&|]*\bpython3?(?:\.\d+)?(?:-dev)?\b"
        r"(?!-pip)|\bpyenv\s+install|\buv\s+python\s+install|Miniconda3?-\S*\.sh|Miniforge3?-\S*\.sh"
        rf"|\b{CONDA_INSTALL}\b[^;&|]*\bpython=)"
    ),
    Step.PYTORCH: re.compile(
        rf"\b(?:{PIP_INSTALL}|{CONDA_INSTALL})\b[^;&|]*(?<![\w.-])(?:torch|torchvision|torchaudio|torch[-_]npu|pytorch)"
        r"(?![\w.-]*\.txt)\b"
    ),
}
_PACKAGE_INSTALL = re.compile(rf"\b(?:{PIP_INSTALL}|{CONDA_INSTALL})\s+(?P<args>[^;&|]*)")
_TORCH_WORDS = re.compile(r"^(?:torch|torchvision|torchaudio|torch[-_]npu|pytorch)\b")


def steps_of(command: str) -> set[Step]:
    """Which kinds of step a RUN command performs."""
    found = {step for step, pattern in _PATTERNS.items() if pattern.search(command)}
    for match in _PACKAGE_INSTALL.finditer(command):
        words = _package_words(match.group("args").split())
        if any(not _TORCH_WORDS.match(w) and not w.startswith("python=") for w in words):
            found.add(Step.PACKAGES)
        if "-r" in match.group("args").split() or "--requirement" in match.group("args"):
            found.add(Step.PACKAGES)
    return found


_VALUED_OPTIONS = frozenset(
    {"-i", "--index-url", "--extra-index-url", "-f", "--find-links", "-c", "--constraint"}
    | {"-t", "--target", "--trusted-host", "--prefix", "--root", "-n", "--name", "-p"}
    | {"--channel"}
)


def _package_words(words: list[str]) -> list[str]:
    """The package arguments of an install command: options and their values left out."""
    kept = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word in _VALUED_OPTIONS:
            skip = True
        elif not word.startswith("-"):
            kept.append(word)
    return kept

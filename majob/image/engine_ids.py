"""Parse a ModelArts preset engine version id into the versions it names (pure, no I/O).

The platform spells an engine version as ``<engine_ver>-[cpu|cuda_x|cann_x]-py_x-<os_ver>-<arch>``
(reference modelarts.md §3.4), e.g. ``pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64`` or
``horovod_0.22.1-pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64``. Some ids write the OS
version without dots (``ubuntu_1804``); it is normalised to ``18.04``.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from dataclasses import dataclass

from majob.errors import UserInputError

ARCHES = ("x86_64", "aarch64")
OS_NAMES = ("ubuntu", "euler", "euleros", "centos", "debian", "openeuler")
_PART = re.compile(r"^([a-z][a-z0-9]*)_([0-9][0-9A-Za-z.]*)$")
_NUMBER = re.compile(r"\d+")


class EngineIdError(UserInputError):
    """A string is not a preset engine version id, or names no engine majob knows."""


@dataclass(frozen=True)
class EngineVersion:
    """What an engine version id says; versions are kept as written (``8.0.rc1`` stays so)."""

    id: str
    frameworks: tuple[tuple[str, str], ...]  # (name, version) in id order, e.g. horovod, pytorch
    python: str
    cuda: str | None
    cann: str | None
    os: str
    os_version: str
    arch: str

    @property
    def pytorch(self) -> str | None:
        return self.framework("pytorch")

    @property
    def accelerator(self) -> str:
        """``cuda``, ``cann`` (Ascend) or ``cpu``."""
        return "cuda" if self.cuda else "cann" if self.cann else "cpu"

    def framework(self, name: str) -> str | None:
        return next((version for n, version in self.frameworks if n == name), None)


def parse_engine_version(text: str) -> EngineVersion:
    """Split ``text`` into its parts; raise ``EngineIdError`` saying which part is wrong."""
    parts = text.strip().split("-")
    if len(parts) < 4 or parts[-1] not in ARCHES:
        raise EngineIdError(
            f"{text!r} is not an engine version id: expected "
            "<framework>_<ver>-[cpu|cuda_<ver>|cann_<ver>]-py_<ver>-<os>_<ver>-<x86_64|aarch64>",
            hint="e.g. pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        )
    arch = parts[-1]
    os_part = _PART.match(parts[-2])
    if os_part is None or os_part.group(1) not in OS_NAMES:
        raise EngineIdError(
            f"{text!r}: {parts[-2]!r} is not an OS like ubuntu_18.04 or euler_2.8.3"
        )
    os_name, os_version = os_part.groups()
    if os_name == "ubuntu" and re.fullmatch(r"\d{4}", os_version):
        os_version = f"{os_version[:2]}.{os_version[2:]}"
    frameworks: list[tuple[str, str]] = []
    python = cuda = cann = None
    for part in parts[:-2]:
        if part == "cpu":
            continue
        match = _PART.match(part)
        if match is None:
            raise EngineIdError(f"{text!r}: {part!r} is not <name>_<version>")
        name, version = match.groups()
        if name == "py":
            python = version
        elif name == "cuda":
            cuda = version
        elif name == "cann":
            cann = version
        else:
            frameworks.append((name, version))
    if python is None:
        raise EngineIdError(f"{text!r} names no Python version (py_<ver>)")
    if not frameworks:
        raise EngineIdError(f"{text!r} names no framework (e.g. pytorch_<ver>)")
    return EngineVersion(
        id=text.strip(),
        frameworks=tuple(frameworks),
        python=python,
        cuda=cuda,
        cann=cann,
        os=os_name,
        os_version=os_version,
        arch=arch,
    )


def version_key(version: str) -> tuple[int, ...]:
    """The numbers of a version, for ordering and distance (``8.0.rc1`` → ``(8, 0, 1)``)."""
    return tuple(int(n) for n in _NUMBER.findall(version))


def same_release(a: str, b: str, depth: int = 2) -> bool:
    """Whether two versions agree on their first ``depth`` numbers (``3.7.4`` ~ ``3.7``)."""
    return version_key(a)[:depth] == version_key(b)[:depth]


def closest_ids(text: str, known: Iterable[str], n: int = 3) -> list[str]:
    """The known ids most like ``text``, best first: by the frameworks, versions, Python and
    accelerator they name when ``text`` parses, else by spelling."""
    candidates = list(known)
    try:
        target = parse_engine_version(text)
    except EngineIdError:
        close = difflib.get_close_matches(text, candidates, n=n, cutoff=0.4)
        return close or candidates[:n]

    def score(candidate: str) -> tuple[int, tuple[int, ...], bool, bool, float]:
        other = parse_engine_version(candidate)
        shared = [name for name, _ in target.frameworks if other.framework(name)]
        distance: tuple[int, ...] = (999,)
        if shared:
            mine, theirs = (
                version_key(target.framework(shared[0]) or ""),
                version_key(other.framework(shared[0]) or ""),
            )
            distance = tuple(abs(a - b) for a, b in zip(mine, theirs, strict=False))
        return (
            -len(shared),
            distance,
            not same_release(target.python, other.python),
            target.accelerator != other.accelerator,
            -difflib.SequenceMatcher(None, text, candidate).ratio(),
        )

    return sorted(candidates, key=score)[:n]

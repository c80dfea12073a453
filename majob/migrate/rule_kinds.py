"""The kinds a rule is made of: how bad a finding is, which rewrite fixes it, which hardware the
code should run on, and the rule record itself. ``rules`` holds the table."""

from __future__ import annotations

import enum
from typing import NamedTuple


class Severity(enum.IntEnum):
    """How bad a finding is; ordered so that ``--fail-on`` can compare."""

    NOTE = 1
    WARNING = 2
    ERROR = 3

    @property
    def label(self) -> str:
        return self.name.lower()

    @classmethod
    def parse(cls, text: str) -> Severity:
        try:
            return cls[text.upper()]
        except KeyError:
            raise ValueError(f"unknown severity {text!r}: use note, warning or error") from None


class Codemod(str, enum.Enum):
    """The rewrites ``majob migrate --to`` offers."""

    CLOUD_PATHS = "cloud-paths"
    DDP = "ddp"
    NPU_AUTO = "npu-auto"
    NPU_MANUAL = "npu-manual"
    RESUME = "resume"


class Target(str, enum.Enum):
    """The hardware the checked code should run on."""

    GPU = "gpu"
    NPU = "npu"


class Rule(NamedTuple):
    """One check: its id, a short name, the default severity, a fix hint, the codemods fixing it."""

    id: str
    name: str
    severity: Severity
    summary: str
    hint: str
    fixed_by: tuple[Codemod, ...] = ()
    npu_only: bool = False

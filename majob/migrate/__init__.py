"""Migration checks and rewrites: cloud paths, DataParallel to DDP, GPU to Ascend NPU.

``checker`` (stdlib ``ast``) finds problems and plans fixes: ``facts`` records what one pass over
a file sees, ``rules_paths``, ``rules_distributed`` and ``rules_npu`` decide the findings and fixes.
``rewrite`` applies one codemod's fixes through ``splice`` (as text where that is exact) and
``codemods`` (libcst, imported only for the rest). The CPU stand-in that lets NPU code run
without NPUs is the runner's (``majob.runner.standin``). This package module stays light:
``majob --help`` imports it.
"""

from __future__ import annotations

from majob.migrate.findings import FileReport, Finding, Fix, Span
from majob.migrate.rules import RULES, Codemod, Rule, Severity, Target

__all__ = ["RULES", "Codemod", "FileReport", "Finding", "Fix", "Rule", "Severity", "Span", "Target"]

"""Ascend NPU (MA301-MA326, ``--target npu`` only): CUDA uses and the torch_npu imports.

``from torch_npu.contrib import transfer_to_npu`` patches torch.cuda, ``.cuda()``, the nccl backend
and cuda device strings at run time, so with it in the file those candidates are not reported;
the ``npu-auto`` codemod adds that import, ``npu-manual`` rewrites each use instead.
"""

from __future__ import annotations

from majob.migrate.facts import FileFacts
from majob.migrate.facts.imports import TOP_OF_FILE, insert_after
from majob.migrate.findings import FileFindings, Fix
from majob.migrate.rules import Codemod, Severity

# torch 2.5 loads out-of-tree device backends on `import torch` (entry points), and the torch_npu
# releases built for it register there: with them the explicit import is no longer required.
AUTOLOAD_FROM = (2, 5)


def check_npu(
    facts: FileFacts, out: FileFindings, torch_version: tuple[int, int] | None = None
) -> None:
    """MA301-MA326: CUDA uses on an Ascend target, and the torch_npu imports that cover them."""
    covered = {"MA301", "MA302", "MA303", "MA304", "MA306", "MA307"}
    uncovered = [] if facts.has_transfer else [c for c in facts.candidates if c.rule in covered]
    imports_torch = facts.first_torch_import is not None
    anchor = facts.first_torch_import

    def placed(codemod: Codemod, code: str) -> Fix:
        return insert_after(anchor, codemod, "MA305", code)

    auto_code = ("" if facts.imports_torch_npu else "import torch_npu\n") + (
        "" if facts.has_transfer else "from torch_npu.contrib import transfer_to_npu\n"
    )
    auto_fix = None
    if auto_code and ((imports_torch and not facts.imports_torch_npu) or uncovered):
        auto_fix = placed(Codemod.NPU_AUTO, auto_code)
    manual_import = None
    if not facts.imports_torch_npu and (imports_torch or uncovered):
        manual_import = placed(Codemod.NPU_MANUAL, "import torch_npu\n")
    for cand in facts.candidates:
        if cand.rule in covered and facts.has_transfer:
            continue
        fixes = [cand.fix] if cand.fix else []
        if cand.rule in covered and auto_fix:
            fixes.append(auto_fix)
        if cand.fix and manual_import:
            fixes.append(manual_import)
        out.report(cand.rule, cand.span, cand.detail, *fixes)
    if manual_import:
        fixes = [f for f in (auto_fix, manual_import) if f]
        severity: Severity | None = None
        if facts.npu_loader is not None:
            detail, severity = facts.npu_loader, Severity.NOTE
        elif torch_version is not None and torch_version >= AUTOLOAD_FROM:
            shown = ".".join(map(str, torch_version))
            detail, severity = f"torch {shown} loads it by itself", Severity.NOTE
        elif not facts.candidates:
            detail, severity = "the file is device-agnostic", Severity.NOTE
        else:
            detail, severity = "", None
        out.report("MA305", anchor or TOP_OF_FILE, detail, *fixes, severity=severity)
    elif auto_fix:
        out.fixes.append(auto_fix)

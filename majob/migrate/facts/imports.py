"""The import collector of the single pass: the names imports bind, where the first imports are
(fixes insert theirs after them), and, for ``--target npu``, the imports of CUDA-only modules."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts.records import NpuCandidate
from majob.migrate.facts.state import FactsBase
from majob.migrate.findings import Fix, Span
from majob.migrate.rules import Codemod

TOP_OF_FILE = Span(1, 0, 1, 0)


class ImportFacts(FactsBase):
    """Records import aliases, the first (torch) import, and imports that block Ascend."""

    def _import(self, node: ast.Import) -> None:
        for alias in node.names:
            if alias.asname:
                self.aliases[alias.asname] = alias.name
            else:
                head = alias.name.split(".", 1)[0]
                self.aliases[head] = head
            self._imported(alias.name, node)

    def _import_from(self, node: ast.ImportFrom) -> None:
        module = node.module or ""
        if node.level:
            return
        for alias in node.names:
            if alias.name == "*":
                continue
            full = f"{module}.{alias.name}"
            self.aliases[alias.asname or alias.name] = full
            # `from apex import amp` is one blocked import, reported for the module below
            self._imported(full, node, blockers=pt.module_blocker(module) is None)
        self._imported(module, node)
        if self.npu and (module == "torch.cuda" or module.startswith("torch.cuda.")):
            parts = module.split(".")[2:3] or [a.name for a in node.names]
            span = self.span(node)
            if any(p in pt.CUDA_ONLY for p in parts):
                self.candidates.append(NpuCandidate("MA311", span, f"from {module}"))
            else:
                new = "torch_npu.npu" + module[len("torch.cuda") :]
                fix = Fix(Codemod.NPU_MANUAL, "MA302", "replace-module", span, code=new, old=module)
                self.candidates.append(NpuCandidate("MA302", span, f"from {module}", fix))

    def _imported(self, module: str, node: ast.stmt, blockers: bool = True) -> None:
        if module == "torch_npu" or module.startswith("torch_npu."):
            self.imports_torch_npu = True
        if module == pt.TRANSFER_TO_NPU_MODULE:
            self.has_transfer = True
        head = module.split(".", 1)[0]
        if head in pt.NPU_LOADING_MODULES and self.npu_loader is None:
            self.npu_loader = pt.NPU_LOADING_MODULES[head]
        if self.npu and blockers:
            rule = pt.module_blocker(module)
            if rule:
                self.candidates.append(NpuCandidate(rule, self.span(node), f"import {module}"))

    def _first_imports(self, tree: ast.Module) -> None:
        """Where the module's first import and first torch import are (``__future__`` aside)."""
        for stmt in tree.body:
            if type(stmt) is ast.Import or (
                type(stmt) is ast.ImportFrom and stmt.module != "__future__"
            ):
                if self.first_import is None:
                    self.first_import = self.span(stmt)
                modules = (
                    [a.name for a in stmt.names]
                    if isinstance(stmt, ast.Import)
                    else [stmt.module or ""]
                )
                if self.first_torch_import is None and any(
                    m == "torch" or m.startswith("torch.") for m in modules
                ):
                    self.first_torch_import = self.span(stmt)

    def import_fix(self, codemod: Codemod, rule: str, code: str) -> Fix:
        """Insert the import ``code`` after the first import (the first torch import for torch)."""
        anchor = self.first_import
        if "torch" in code and self.first_torch_import is not None:
            anchor = self.first_torch_import
        return insert_after(anchor, codemod, rule, code)


def insert_after(anchor: Span | None, codemod: Codemod, rule: str, code: str) -> Fix:
    """Insert ``code`` after the statement at ``anchor``, or at the top of the file without one."""
    if anchor is not None:
        return Fix(codemod, rule, "insert-after", anchor, code=code)
    return Fix(codemod, rule, "insert-top", TOP_OF_FILE, code=code)

"""The Ascend collector of the single pass (MA3xx facts): CUDA uses that may become NPU findings,
with the fixes ``npu-manual`` applies."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts.records import NpuCandidate
from majob.migrate.facts.state import FactsBase
from majob.migrate.findings import Fix
from majob.migrate.rules import Codemod

_ATTR_QUALIFIED = (
    pt.CUDA_ONLY_QUALIFIED | pt.CUDA_EXTENSION | pt.APEX_FUSED | pt.JIT_SCRIPT | pt.FP64
) | {pt.CHANNELS_LAST}
ATTR_TRIGGERS = frozenset(q.rsplit(".", 1)[1] for q in _ATTR_QUALIFIED)


class NpuFacts(FactsBase):
    """Records CUDA APIs, methods, device strings and blockers as NPU candidates."""

    def _torch_cuda(self, node: ast.Attribute) -> None:
        span = self.span(node)
        if node.attr in pt.CUDA_ONLY:
            self.candidates.append(NpuCandidate("MA311", span, f"torch.cuda.{node.attr}"))
            return
        fix = Fix(
            Codemod.NPU_MANUAL, "MA302", "replace-expr", span, code=f"torch_npu.npu.{node.attr}"
        )
        self.candidates.append(NpuCandidate("MA302", span, f"torch.cuda.{node.attr}", fix))

    def _qualified_use(self, qual: str, node: ast.AST) -> None:
        rule = None
        if qual in pt.CUDA_ONLY_QUALIFIED:
            rule = "MA311"
        elif qual in pt.CUDA_EXTENSION:
            rule = "MA320"
        elif qual in pt.APEX_FUSED:
            rule = "MA321"
        elif qual in pt.JIT_SCRIPT:
            rule = "MA324"
        elif qual == pt.CHANNELS_LAST:
            rule = "MA325"
        elif qual in pt.FP64:
            rule = "MA326"
        if rule:
            self.candidates.append(NpuCandidate(rule, self.span(node), qual))

    def _nccl_available(self, node: ast.Attribute) -> None:
        """``dist.is_nccl_available()``: False on Ascend; torch_npu adds is_hccl_available."""
        span = self.span(node)
        fix = Fix(Codemod.NPU_MANUAL, "MA313", "rename-attr", span, code="is_hccl_available")
        self.candidates.append(NpuCandidate("MA313", span, "is_nccl_available()", fix))

    def _map_location_keys(self, node: ast.Call) -> None:
        """``map_location={"cuda:0": f"npu:{rank}"}``: a key names where the checkpoint was
        saved, not a device to use; rewritten, a checkpoint from the GPU would not be remapped."""
        location = next((k.value for k in node.keywords if k.arg == "map_location"), None)
        if type(location) is ast.Dict:
            self.skip_strings.update(id(key) for key in location.keys if key is not None)

    def _cuda_string(
        self, node: ast.Constant, value: str, device_rule: str, nccl_rule: str
    ) -> bool:
        """Record ``value`` when it is a cuda device string or the nccl backend's name."""
        if pt.is_cuda_device_string(value):
            self._string_candidate(device_rule, node, value, pt.npu_device_string(value))
        elif value.lower() == "nccl":
            self._string_candidate(nccl_rule, node, value, "HCCL" if value.isupper() else "hccl")
        else:
            return False
        return True

    def _string_candidate(self, rule: str, node: ast.Constant, old: str, new: str) -> None:
        span = self.span(node)
        text = self.segment(node) or ""
        # Implicitly concatenated literals are left alone (no single token to rewrite).
        fix = (
            Fix(Codemod.NPU_MANUAL, rule, "replace-string", span, old=old, new=new)
            if text[-1:] in "'\"" and text.count(old) == 1
            else None
        )
        self.candidates.append(NpuCandidate(rule, span, repr(old), fix))

    def _cuda_attribute(self, node: ast.Attribute) -> None:
        """``x.is_cuda``, ``torch.cuda.<api>``, ``dist.is_nccl_available`` and the attributes
        of CUDA-only or Ascend-blocking APIs."""
        attr = node.attr
        value = node.value
        if (
            attr == "accelerator"
            and self.npu_loader is None
            and self.qualname(node) == pt.ACCELERATOR_API
        ):
            self.npu_loader = "torch.accelerator (torch >= 2.6) loads torch_npu by itself"
        if attr == "is_cuda":
            span = self.span(node)
            fix = Fix(Codemod.NPU_MANUAL, "MA306", "rename-attr", span, code="is_npu")
            self.candidates.append(NpuCandidate("MA306", span, "", fix))
        elif (
            (type(value) is ast.Attribute and value.attr == "cuda")
            or (type(value) is ast.Name and self.aliases.get(value.id) == "torch.cuda")
        ) and self.qualname(value) == "torch.cuda":
            self._torch_cuda(node)
        elif attr == "is_nccl_available" and self.qualname(node) == pt.NCCL_AVAILABLE:
            self._nccl_available(node)
        if attr in ATTR_TRIGGERS:
            qual = self.qualname(node)
            if qual:
                self._qualified_use(qual, node)

    def _cuda_method(self, func: ast.Attribute) -> None:
        """``model.cuda()`` (not ``torch.cuda``): ``.npu()`` on Ascend."""
        if self.qualname(func) != "torch.cuda":
            span = self.span(func)
            fix = Fix(Codemod.NPU_MANUAL, "MA303", "rename-attr", span, code="npu")
            self.candidates.append(NpuCandidate("MA303", span, "", fix))

    def _cuda_fstring(self, node: ast.JoinedStr) -> None:
        """``f"cuda:{rank}"``: the device prefix becomes ``npu:``."""
        span = self.span(node)
        fix = Fix(Codemod.NPU_MANUAL, "MA304", "replace-string", span, old="cuda:", new="npu:")
        self.candidates.append(NpuCandidate("MA304", span, "f'cuda:...'", fix))

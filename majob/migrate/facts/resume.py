"""The resume collector of the single pass (MA4xx facts): checkpoint saves and where they run
(an epoch loop, a function called from one), checkpoint loads, and renames that make a save
atomic. ``rules_resume`` decides the findings."""

from __future__ import annotations

import ast
from typing import NamedTuple

from majob.migrate.facts.records import EpochLoop, Scope
from majob.migrate.facts.state import FactsBase
from majob.migrate.findings import Span

# Savers known by name (Lightning, Hugging Face, accelerate); a function of the file whose name
# says "save" is one too.
FRAMEWORK_SAVERS = frozenset({"save_checkpoint", "save_state", "save_pretrained", "save_model"})
# What shows that a script resumes: a state dict or a framework's state loaded back.
LOADERS = frozenset({"load_state_dict", "load_checkpoint", "load_state", "load_from_checkpoint"})
RESUME_KEYWORDS = frozenset({"resume_from_checkpoint", "ckpt_path"})
RENAMES = frozenset({"replace", "rename", "move"})
WATCHED = FRAMEWORK_SAVERS | LOADERS | RENAMES | {"save", "load", "train", "fit"}


def _saver(name: str) -> bool:
    """A function or method named for saving (``save_checkpoint``, ``_save_snapshot``)."""
    return "save" in name.lower()


class CheckpointSave(NamedTuple):
    """A save call: ``torch.save`` (``torch``), a saver named for saving (``saver``)."""

    node: ast.Call
    span: Span
    stmt: Span | None  # the statement, when the save is a whole expression statement
    kind: str
    scope: Scope
    loop: EpochLoop | None  # the innermost epoch loop around it
    in_steps: bool = False  # in a loop over training steps (``for iteration in range(...)``)


class LoopCall(NamedTuple):
    """A call of a function of the file inside an epoch loop (``train(epoch)``, ``save(m)``)."""

    callee: str
    span: Span
    loop: EpochLoop


class ResumeFacts(FactsBase):
    """Records the saves, loads and renames the resume rules decide on."""

    def __init__(self, source: str, npu: bool) -> None:
        super().__init__(source, npu)
        self.checkpoint_saves: list[CheckpointSave] = []
        self.loop_calls: list[LoopCall] = []
        self.checkpoint_loads: list[Span] = []
        self.renames: list[tuple[Scope, int]] = []  # (scope, line) of os.replace and the like
        self.torch_loads: list[ast.Call] = []  # torch.load calls: a resume reads a checkpoint
        self.step_loops = 0  # how many loops over steps or iterations the walk is in

    def _resume_call(self, node: ast.Call, func: ast.expr) -> None:
        """Called for every call; cheap unless the called name is one it watches."""
        name = (
            func.attr if type(func) is ast.Attribute else func.id if type(func) is ast.Name else ""
        )
        if self.loops and name in self.defined_names and (type(func) is ast.Name or _saver(name)):
            # model.train() is torch's, not the file's train(): a method counts when it saves
            self.loop_calls.append(LoopCall(name, self.span(node), self.loops[-1]))
        if name not in WATCHED and not (name in self.defined_names and _saver(name)):
            return
        if name in LOADERS:
            self.checkpoint_loads.append(self.span(node))
        elif name in RENAMES:
            self.renames.append((self.scope, node.lineno))
        elif name in ("train", "fit"):
            if any(k.arg in RESUME_KEYWORDS for k in node.keywords):
                self.checkpoint_loads.append(self.span(node))
        elif name == "load" and self.qualname(func) == "torch.load":
            self.torch_loads.append(node)
        elif name == "save" and self.qualname(func) == "torch.save":
            self._checkpoint_save(node, "torch")
        elif name in FRAMEWORK_SAVERS or name in self.defined_names:
            self._checkpoint_save(node, "saver")

    def _checkpoint_save(self, node: ast.Call, kind: str) -> None:
        stmt = self.stmt
        whole = type(stmt) is ast.Expr and stmt.value is node
        self.checkpoint_saves.append(
            CheckpointSave(
                node,
                self.span(node),
                self.span(stmt) if whole and stmt is not None else None,
                kind,
                self.scope,
                self.loops[-1] if self.loops else None,
                self.step_loops > 0,
            )
        )

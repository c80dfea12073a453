"""The framework collector of the single pass: Lightning, Hugging Face and accelerate paths and
entry points (``frameworks``), launcher-only set-ups, ``torch.compile`` and integer devices."""

from __future__ import annotations

import ast

from majob.migrate import frameworks as fw
from majob.migrate import patterns as pt
from majob.migrate.facts.paths import PathFacts
from majob.migrate.facts.records import NpuCandidate, Site
from majob.migrate.findings import Fix
from majob.migrate.rules import Codemod


class FrameworkFacts(PathFacts):
    """Records framework paths, argument parsers that reject ModelArts' arguments, launcher-only
    code, ``torch.compile`` and bare integer devices."""

    def _framework_call(self, node: ast.Call, qual: str) -> None:
        for spec in fw.PATH_ARGUMENTS.get(qual, ()):
            for value in _literal_items(_argument(node, spec)):
                self._path_value(value, spec.kind, spec.is_dir, False, None, 0)
        if qual in fw.OBJECT_METHODS:
            stmt = self.stmt
            target = stmt.targets[0] if type(stmt) is ast.Assign and stmt.value is node else None
            name = target.id if type(target) is ast.Name else None
            if name is not None:
                self.framework_objects[name] = qual
        keywords = {k.arg for k in node.keywords}
        if qual in fw.LIGHTNING_TRAINERS:
            if "default_root_dir" in keywords:
                self.lightning_root_set = True
            else:
                self.lightning_dirs.append(Site(self.span(node), "Trainer", self.scope))
        elif qual in fw.LIGHTNING_CHECKPOINTS and "dirpath" not in keywords and not node.args:
            self.lightning_dirs.append(Site(self.span(node), "ModelCheckpoint", self.scope))
        if qual in fw.REJECTING_CALLS:
            self.rejects_arguments.append(Site(self.span(node), fw.REJECTING_CALLS[qual]))
        if qual in fw.LAUNCHED_CALLS:
            self.launcher_only.append(Site(self.span(node), fw.LAUNCHED_CALLS[qual]))
        if qual == fw.HF_ARGUMENT_PARSER and node.args:
            first = node.args[0]
            items = first.elts if type(first) in (ast.Tuple, ast.List) else [first]  # type: ignore[attr-defined]
            self.flag_classes.update(item.id for item in items if type(item) is ast.Name)
        if qual == fw.TORCH_COMPILE and self.npu:
            self.candidates.append(NpuCandidate("MA328", self.span(node), "torch.compile"))

    def _framework_method(self, node: ast.Call, func: ast.Attribute) -> None:
        attr = func.attr
        spec = fw.PATH_METHODS.get(attr)
        receiver = func.value
        if spec is None and type(receiver) is ast.Name:
            spec = fw.OBJECT_METHODS.get(self.framework_objects.get(receiver.id, ""), {}).get(attr)
        if spec is not None:
            self._path_arg(node, spec, spec.kind)
        elif attr == "from_pretrained":
            self._pretrained_source(node)
        elif attr == fw.HF_PARSE and not any(
            k.arg == "return_remaining_strings" for k in node.keywords
        ):
            detail = "HfArgumentParser raises on arguments it does not know"
            self.rejects_arguments.append(Site(self.span(node), detail))
        elif attr == "to" and len(node.args) == 1 and self.npu:
            self._integer_device(node.args[0])

    def _pretrained_source(self, node: ast.Call) -> None:
        """What ``from_pretrained`` loads: "./model" is a path; "bert-base-uncased" a hub id,
        which a training container usually cannot download; ``args.model`` names the flag."""
        first = node.args[0] if node.args else None
        for keyword in node.keywords:
            if keyword.arg == "pretrained_model_name_or_path":
                first = keyword.value
        if type(first) is ast.Constant and type(first.value) is str:
            if fw.explicit_local_path(first.value):
                self._path_value(first, "input", True, False, None, 0)
            elif fw.literal_hub_id(first.value):
                self.hub_literals.append(Site(self.span(first), first.value))
        elif type(first) is ast.Attribute:
            self.pretrained_sources.add(first.attr)  # from_pretrained(args.model)

    def _integer_device(self, arg: ast.expr) -> None:
        """``.to(local_rank)``: an int is a CUDA index; on the NPU it must be named."""
        name = arg.id if type(arg) is ast.Name else getattr(arg, "attr", None)
        integer = type(arg) is ast.Constant and type(arg.value) is int
        if not integer and (name is None or name.lower() not in fw.INTEGER_DEVICE_NAMES):
            return
        source = self.segment(arg)
        if source is None:
            return
        span = self.span(arg)
        code = f'"npu:{source}"' if integer else f'f"npu:{{{source}}}"'
        fix = Fix(Codemod.NPU_MANUAL, "MA307", "replace-expr", span, code=code)
        self.candidates.append(NpuCandidate("MA307", span, f".to({source})", fix))

    def _exec_call(self, node: ast.Call) -> None:
        """``exec(open("configurator.py").read())``: a configurator that raises on any
        ``--key=value`` it has no global for (nanoGPT)."""
        code = node.args[0] if node.args else None
        if (
            type(code) is ast.Call
            and type(code.func) is ast.Attribute
            and code.func.attr == "read"
            and type(code.func.value) is ast.Call
            and self.qualname(code.func.value.func) in pt.OPEN_CALLS
        ):
            opened = code.func.value.args[0] if code.func.value.args else None
            name = str(opened.value) if type(opened) is ast.Constant else ""
            if pt.is_code_file(name):
                missing = [f for f in pt.CHANNEL_FLAGS.values() if f not in self.flags]
                stmt = self.stmt if self.stmt is not None else node
                if self.scope.is_module:  # a channel global declared before it passes there
                    self.configurator = Site(self.span(stmt), name, self.scope)
                if missing or not self.scope.is_module:
                    detail = f"{name} raises on --{missing[0] if missing else 'data_url'}"
                    self.rejects_arguments.append(Site(self.span(node), detail, self.scope))

    def _environ_read(self, node: ast.Subscript) -> None:
        """``os.environ["LOCAL_RANK"]`` outside any test of the launch: a KeyError under python."""
        key = node.slice
        if (
            type(node.ctx) is ast.Load
            and type(key) is ast.Constant
            and key.value in fw.LAUNCHER_ENV
            and self.qualname(node.value) == "os.environ"
            and not self.in_try
            and not any(g in w for w in self._guard_words() for g in fw.LAUNCHED_WORDS)
            and not self._tested_in_statement()
        ):
            detail = f"os.environ[{key.value!r}] raises KeyError under plain python"
            self.launcher_only.append(Site(self.span(node), detail))

    def _tested_in_statement(self) -> bool:
        """``"WORLD_SIZE" in os.environ and int(os.environ["WORLD_SIZE"]) > 1``: tested first."""
        text = self.segment(self.stmt) if self.stmt is not None else None
        return text is not None and " in os.environ" in text


def _argument(node: ast.Call, spec: pt.PathArg) -> ast.expr | None:
    if 0 <= spec.position < len(node.args):
        return node.args[spec.position]
    return next((k.value for k in node.keywords if k.arg == spec.keyword), None)


def _literal_items(node: ast.expr | None) -> list[ast.expr]:
    """The paths in a value: itself, or the items of a list, tuple or dict of them."""
    if node is None:
        return []
    if type(node) in (ast.List, ast.Tuple):
        return list(node.elts)  # type: ignore[attr-defined]
    if type(node) is ast.Dict:
        return [v for v in node.values if v is not None]
    return [node]

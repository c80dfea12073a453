"""``majob check``: one pass of the stdlib ``ast`` per file feeds every rule.

The pass records facts (imports, argument parsers, path literals, loaders, loops, saves, CUDA
uses); whole-file rules are decided at the end, together with the ``Fix`` list that the codemods
apply. Unparsable files become an ``MA000`` finding and are skipped.
"""

from __future__ import annotations

import ast
import io
import warnings
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from majob.errors import UserInputError
from majob.migrate import patterns as pt
from majob.migrate.findings import FileReport, Finding, Fix, Span
from majob.migrate.rules import RULES, Codemod, Target, rule_severity

_STMT = ast.stmt
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_BUILTINS = {"open": "builtins.open"}
_ATTR_QUALIFIED = (
    pt.CUDA_ONLY_QUALIFIED | pt.CUDA_EXTENSION | pt.APEX_FUSED | pt.JIT_SCRIPT | pt.FP64
) | {pt.CHANNELS_LAST}
_ATTR_TRIGGERS = frozenset(q.rsplit(".", 1)[1] for q in _ATTR_QUALIFIED)


def source_lines(source: str) -> list[str]:
    """The lines as Python's tokenizer counts them (``\n``, ``\r\n``, ``\r``; not the form
    feeds and other separators ``str.splitlines`` also splits on), with their endings."""
    return io.StringIO(source, newline="").readlines()


def _py_str(value: str) -> str:
    """``value`` as a double-quoted Python literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass(eq=False)
class _Scope:
    is_module: bool
    rank_guarded: bool = False


@dataclass
class _ParseSite:
    scope: _Scope
    end_line: int
    stmt: Span
    args_name: str | None
    parser_name: str | None


@dataclass
class _PathSite:
    span: Span
    use: pt.PathUse
    scope: _Scope
    line: int


@dataclass
class _PathConstant:
    """A module-level ``NAME = "path"`` (or ``os.path.join(..., "file")``) used as a path."""

    name: str
    line: int
    value: str | None  # the literal, for a plain string constant
    base_name: str  # the last literal segment (the file name for a file)
    is_file: bool
    kind: pt.PathKind | None  # from a use in a path position, else from the name
    uses: list[tuple[Span, _Scope, int]] = field(default_factory=list)


@dataclass
class _Loader:
    span: Span
    target: str | None
    shuffles: bool
    has_sampler: bool
    dataset: str | None


@dataclass
class _Loop:
    span: Span
    target: str | None
    nested: bool
    refs: dict[str, None] = field(default_factory=dict)
    sets_epoch: bool = False


@dataclass
class _Save:
    span: Span
    stmt: Span | None  # the statement when the save is a whole expression statement
    guard: str | None  # None, "global" or "local"


@dataclass
class _DataParallel:
    span: Span
    stmt: Span | None
    target: str | None
    module_src: str | None
    scope: _Scope
    line: int


@dataclass
class _Candidate:
    """An NPU finding kept until the end: whether it is reported depends on later imports."""

    rule: str
    span: Span
    detail: str
    fix: Fix | None = None


class _Analyzer:
    def __init__(self, source: str, path: str, target: Target) -> None:
        self.source = source
        self.path = path
        self.target = target
        self.npu = target is Target.NPU
        self._ascii = source.isascii()
        self._lines: list[str] | None = None
        self._segment_lines: list[bytes] | None = None
        self.findings: list[Finding] = []
        self.fixes: list[Fix] = []
        self.aliases: dict[str, str] = {}
        self.scope = _Scope(is_module=True)
        self.module_scope = self.scope
        self.stmt: ast.stmt | None = None
        self.guards: list[frozenset[str]] = []
        self.loops: list[_Loop] = []
        self.all_loops: list[_Loop] = []
        self.parses: list[_ParseSite] = []
        self.flags: dict[str, str | None] = {}
        self.arg_defaults: set[int] = set()
        self.skip_strings: set[int] = set()
        self.paths: list[_PathSite] = []
        self.constants: dict[str, _PathConstant] = {}
        self.in_add_argument = False
        self.loaders: list[_Loader] = []
        self.samplers: list[tuple[Span, str | None]] = []
        self.sets_epoch = False
        self.saves: list[_Save] = []
        self.state_dicts: list[tuple[Span, ast.Name]] = []
        self.data_parallel: list[_DataParallel] = []
        self.wrapped: dict[str, None] = {}
        self.has_ddp = False
        self.has_init = False
        self.imports_torch_npu = False
        self.has_transfer = False
        self.candidates: list[_Candidate] = []
        self.first_import: Span | None = None
        self.first_torch_import: Span | None = None
        self._dispatch: dict[type, Callable[[Any], None]] = {
            ast.Import: self._import,
            ast.ImportFrom: self._import_from,
            ast.Call: self._call,
            ast.Attribute: self._attribute,
            ast.Name: self._name,
            ast.Constant: self._constant,
            ast.JoinedStr: self._joined_str,
            ast.Compare: self._compare,
            ast.Assign: self._assign,
            ast.If: self._if,
            ast.For: self._for,
            ast.AsyncFor: self._for,
            ast.FunctionDef: self._function,
            ast.AsyncFunctionDef: self._function,
            ast.ClassDef: self._function,
            ast.Lambda: self._function,
        }

    # ------------------------------------------------------------------ traversal

    def visit(self, node: ast.AST) -> None:
        if isinstance(node, _STMT):
            self.stmt = node
        handler = self._dispatch.get(type(node))
        if handler is None:
            self.children(node)
        else:
            handler(node)

    def children(self, node: ast.AST) -> None:
        visit = self.visit
        for name in node._fields:
            value = getattr(node, name, None)
            if type(value) is list:
                for item in value:
                    if isinstance(item, ast.AST):
                        visit(item)
            elif isinstance(value, ast.AST):
                visit(value)

    # ------------------------------------------------------------------ helpers

    def span(self, node: ast.AST) -> Span:
        line: int = node.lineno  # type: ignore[attr-defined]
        end_line: int = node.end_lineno  # type: ignore[attr-defined]
        col: int = node.col_offset  # type: ignore[attr-defined]
        end_col: int = node.end_col_offset  # type: ignore[attr-defined]
        if not self._ascii:
            col, end_col = self._char_col(line, col), self._char_col(end_line, end_col)
        return Span(line, col, end_line, end_col)

    def _char_col(self, line: int, byte_col: int) -> int:
        # ast columns count UTF-8 bytes; reports and libcst count characters.
        if self._lines is None:
            self._lines = source_lines(self.source)
        text = self._lines[line - 1] if line - 1 < len(self._lines) else ""
        return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))

    def qualname(self, node: ast.AST) -> str | None:
        if type(node) is ast.Name:
            return self.aliases.get(node.id) or _BUILTINS.get(node.id)
        if type(node) is ast.Attribute:
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def binding(self, *qualnames: str) -> str | None:
        for name, qual in self.aliases.items():
            if qual in qualnames:
                return name
        return None

    def segment(self, node: ast.AST) -> str | None:
        """The source text of ``node`` (``ast.get_source_segment`` re-splits the whole file on
        every call, which made it the slowest part of a check)."""
        if self._segment_lines is None:
            self._segment_lines = [line.encode("utf-8") for line in source_lines(self.source)]
        lines = self._segment_lines
        first: int = node.lineno - 1  # type: ignore[attr-defined]
        last: int = node.end_lineno - 1  # type: ignore[attr-defined]
        start: int = node.col_offset  # type: ignore[attr-defined]
        end: int = node.end_col_offset  # type: ignore[attr-defined]
        if last >= len(lines):
            return None
        if first == last:
            return lines[first][start:end].decode("utf-8", errors="replace")
        parts = [lines[first][start:], *lines[first + 1 : last], lines[last][:end]]
        return b"".join(parts).decode("utf-8", errors="replace")

    def report(self, rule: str, span: Span, detail: str = "", *fixes: Fix) -> None:
        message = RULES[rule].summary + (f": {detail}" if detail else "")
        fixed_by = tuple(dict.fromkeys(f.codemod for f in fixes))
        self.findings.append(
            Finding(
                self.path,
                span.line,
                span.col + 1,
                rule,
                rule_severity(rule, self.target),
                message,
                fixed_by,
            )
        )
        self.fixes.extend(fixes)

    @staticmethod
    def words(node: ast.AST) -> frozenset[str]:
        found: set[str] = set()
        for sub in ast.walk(node):
            if type(sub) is ast.Name:
                found.add(sub.id.lower())
            elif type(sub) is ast.Attribute:
                found.add(sub.attr.lower())
        return frozenset(found)

    @staticmethod
    def guard_kind(words: Iterable[str]) -> str | None:
        ranky = [w for w in words if any(g in w for g in pt.RANK_GUARD_WORDS)]
        if not ranky:
            return None
        return "local" if all("local" in w for w in ranky) else "global"

    # ------------------------------------------------------------------ statements

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
            self._imported(full, node)
        self._imported(module, node)
        if self.npu and (module == "torch.cuda" or module.startswith("torch.cuda.")):
            parts = module.split(".")[2:3] or [a.name for a in node.names]
            span = self.span(node)
            if any(p in pt.CUDA_ONLY for p in parts):
                self.candidates.append(_Candidate("MA311", span, f"from {module}"))
            else:
                new = "torch_npu.npu" + module[len("torch.cuda") :]
                fix = Fix(Codemod.NPU_MANUAL, "MA302", "replace-module", span, code=new, old=module)
                self.candidates.append(_Candidate("MA302", span, f"from {module}", fix))

    def _imported(self, module: str, node: ast.stmt) -> None:
        if module == "torch_npu" or module.startswith("torch_npu."):
            self.imports_torch_npu = True
        if module == pt.TRANSFER_TO_NPU_MODULE:
            self.has_transfer = True
        if self.npu:
            rule = pt.module_blocker(module)
            if rule:
                self.candidates.append(_Candidate(rule, self.span(node), f"import {module}"))

    def _assign(self, node: ast.Assign) -> None:
        value = node.value
        call = value.value if type(value) is ast.Subscript else value
        target = node.targets[0] if len(node.targets) == 1 else None
        name = target.id if type(target) is ast.Name else None
        if (
            type(call) is ast.Call
            and type(call.func) is ast.Attribute
            and call.func.attr in ("parse_args", "parse_known_args")
        ):
            args_name = name
            if type(target) is ast.Tuple and target.elts and type(target.elts[0]) is ast.Name:
                args_name = target.elts[0].id
            receiver = call.func.value
            self.parses.append(
                _ParseSite(
                    self.scope,
                    node.end_lineno or node.lineno,
                    self.span(node),
                    args_name,
                    receiver.id if type(receiver) is ast.Name else None,
                )
            )
        if target is not None and type(target) is ast.Subscript:
            self._environ_write(self.qualname(target.value), target.slice, node)
        self.children(node)

    def _environ_write(self, obj: str | None, key: ast.AST, node: ast.AST) -> None:
        if obj != "os.environ" or type(key) is not ast.Constant or not isinstance(key.value, str):
            return
        if key.value in pt.RENDEZVOUS_ENV:
            self.report("MA207", self.span(node), key.value)
        elif key.value == "CUDA_VISIBLE_DEVICES":
            self.report("MA209", self.span(node))

    def _if(self, node: ast.If) -> None:
        self.visit(node.test)
        words = self.words(node.test)
        kind = self.guard_kind(words)
        if kind and not node.orelse and type(node.body[-1]) in (ast.Return, ast.Continue):
            # `if rank != 0: return` guards what follows in the same scope.
            self.scope.rank_guarded = True
        self.guards.append(words)
        for child in node.body:
            self.visit(child)
        for child in node.orelse:
            self.visit(child)
        self.guards.pop()

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        names = [n.id for n in ast.walk(node.target) if type(n) is ast.Name]
        if not any("epoch" in n.lower() for n in names):
            self.children(node)
            return
        loop = _Loop(
            self.span(node),
            node.target.id if type(node.target) is ast.Name else None,
            nested=bool(self.loops),
        )
        self.all_loops.append(loop)
        self.visit(node.iter)
        self.loops.append(loop)
        for child in node.body:
            self.visit(child)
        self.loops.pop()
        for child in node.orelse:
            self.visit(child)

    def _function(self, node: ast.AST) -> None:
        outer = self.scope
        if type(node) in (ast.FunctionDef, ast.AsyncFunctionDef):
            for decorator in node.decorator_list:  # type: ignore[attr-defined]
                self.visit(decorator)
            args: ast.arguments = node.args  # type: ignore[attr-defined]
            for default in [*args.defaults, *(d for d in args.kw_defaults if d)]:
                self.visit(default)
            name: str = node.name.lower()  # type: ignore[attr-defined]
            self.scope = _Scope(False, rank_guarded=self.guard_kind([name]) == "global")
            for child in node.body:  # type: ignore[attr-defined]
                self.visit(child)
        else:
            self.scope = _Scope(False)
            self.children(node)
        self.scope = outer

    # ------------------------------------------------------------------ expressions

    def _name(self, node: ast.Name) -> None:
        for loop in self.loops:
            loop.refs.setdefault(node.id, None)
        constant = self.constants.get(node.id)
        if (
            constant is not None
            and type(node.ctx) is ast.Load
            and not self.in_add_argument
            and (not self.scope.is_module or node.lineno > constant.line)
        ):
            constant.uses.append((self.span(node), self.scope, node.lineno))
        if self.npu and node.id in self.aliases:
            self._qualified_use(self.aliases[node.id], node)

    def _attribute(self, node: ast.Attribute) -> None:
        attr = node.attr
        value = node.value
        if self.npu:
            if attr == "is_cuda":
                span = self.span(node)
                fix = Fix(Codemod.NPU_MANUAL, "MA306", "rename-attr", span, code="is_npu")
                self.candidates.append(_Candidate("MA306", span, "", fix))
            elif (
                (type(value) is ast.Attribute and value.attr == "cuda")
                or (type(value) is ast.Name and self.aliases.get(value.id) == "torch.cuda")
            ) and self.qualname(value) == "torch.cuda":
                self._torch_cuda(node)
            if attr in _ATTR_TRIGGERS:
                qual = self.qualname(node)
                if qual:
                    self._qualified_use(qual, node)
        self.visit(value)

    def _torch_cuda(self, node: ast.Attribute) -> None:
        span = self.span(node)
        if node.attr in pt.CUDA_ONLY:
            self.candidates.append(_Candidate("MA311", span, f"torch.cuda.{node.attr}"))
            return
        fix = Fix(
            Codemod.NPU_MANUAL, "MA302", "replace-expr", span, code=f"torch_npu.npu.{node.attr}"
        )
        self.candidates.append(_Candidate("MA302", span, f"torch.cuda.{node.attr}", fix))

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
            self.candidates.append(_Candidate(rule, self.span(node), qual))

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if type(value) is not str or len(value) > 64 or id(node) in self.skip_strings:
            return
        if self.npu:
            if pt.is_cuda_device_string(value):
                self._string_candidate("MA304", node, value, pt.npu_device_string(value))
            elif value.lower() == "nccl":
                self._string_candidate("MA301", node, value, "HCCL" if value.isupper() else "hccl")
        if value.startswith("tcp://") and id(node) not in self.arg_defaults:
            self.report("MA208", self.span(node), value)

    def _string_candidate(self, rule: str, node: ast.Constant, old: str, new: str) -> None:
        span = self.span(node)
        text = self.segment(node) or ""
        # Implicitly concatenated literals are left alone (no single token to rewrite).
        fix = (
            Fix(Codemod.NPU_MANUAL, rule, "replace-string", span, old=old, new=new)
            if text[-1:] in "'\"" and text.count(old) == 1
            else None
        )
        self.candidates.append(_Candidate(rule, span, repr(old), fix))

    def _joined_str(self, node: ast.JoinedStr) -> None:
        first = node.values[0] if node.values else None
        if type(first) is ast.Constant and isinstance(first.value, str):
            if self.npu and first.value.startswith("cuda:"):
                span = self.span(node)
                fix = Fix(
                    Codemod.NPU_MANUAL, "MA304", "replace-string", span, old="cuda:", new="npu:"
                )
                self.candidates.append(_Candidate("MA304", span, "f'cuda:...'", fix))
            if first.value.startswith("tcp://"):
                self.report("MA208", self.span(node), "f'tcp://...'")
        for value in node.values:
            if type(value) is ast.FormattedValue:
                self.visit(value)

    def _compare(self, node: ast.Compare) -> None:
        if self.npu:
            for side in (node.left, *node.comparators):
                if type(side) is not ast.Constant or type(side.value) is not str:
                    continue
                value = side.value
                if pt.is_cuda_device_string(value):
                    self.skip_strings.add(id(side))
                    self._string_candidate("MA310", side, value, pt.npu_device_string(value))
                elif value.lower() == "nccl":
                    self.skip_strings.add(id(side))
                    new = "HCCL" if value.isupper() else "hccl"
                    self._string_candidate("MA312", side, value, new)
        self.children(node)

    # ------------------------------------------------------------------ calls

    def _call(self, node: ast.Call) -> None:
        func = node.func
        if type(func) is ast.Attribute:
            self._method_call(node, func)
            if func.attr == "add_argument":
                # A constant used as an argument's default is the default, not a path use.
                self.in_add_argument = True
                self.children(node)
                self.in_add_argument = False
                return
        qual = self.qualname(func)
        if qual:
            self._qualified_call(node, qual)
        self.children(node)

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        attr = func.attr
        if attr == "cuda":
            if self.npu and self.qualname(func) != "torch.cuda":
                span = self.span(func)
                fix = Fix(Codemod.NPU_MANUAL, "MA303", "rename-attr", span, code="npu")
                self.candidates.append(_Candidate("MA303", span, "", fix))
        elif attr == "state_dict" and not node.args and type(func.value) is ast.Name:
            self.state_dicts.append((self.span(node), func.value))
        elif attr == "double" and not node.args and self.npu:
            self.candidates.append(_Candidate("MA326", self.span(func), ".double()"))
        elif attr == "parse_args":
            stmt = self.stmt
            whole = (
                type(stmt) is ast.Assign
                and stmt.value is node
                and len(stmt.targets) == 1
                and type(stmt.targets[0]) is ast.Name
            )
            span = self.span(node)
            fix = Fix(
                Codemod.CLOUD_PATHS,
                "MA104",
                "parse-known-args",
                span,
                name="tuple" if whole else "index",
            )
            self.report("MA104", span, "", fix)
        elif attr == "add_argument":
            self._add_argument(node)
        elif attr == "set_epoch":
            self.sets_epoch = True
            for loop in self.loops:
                loop.sets_epoch = True
        elif attr == "setdefault" and node.args:
            self._environ_write(self.qualname(func.value), node.args[0], node)
        elif attr in pt.PATH_METHODS:
            self._path_arg(node, pt.PATH_METHODS[attr], pt.PATH_METHODS[attr].kind)

    def _add_argument(self, node: ast.Call) -> None:
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        if default is not None:
            self.arg_defaults.add(id(default))
        for arg in node.args:
            if (
                type(arg) is ast.Constant
                and isinstance(arg.value, str)
                and arg.value.startswith("--")
            ):
                flag = arg.value[2:].replace("-", "_")
                literal = (
                    default.value
                    if type(default) is ast.Constant and isinstance(default.value, str)
                    else None
                )
                self.flags[flag] = literal

    def _qualified_call(self, node: ast.Call, qual: str) -> None:
        spec = pt.PATH_CALLS.get(qual)
        if spec is not None:
            kind = spec.kind
            if qual in pt.OPEN_CALLS:
                mode = node.args[1] if len(node.args) > 1 else None
                mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
                literal = mode.value if type(mode) is ast.Constant else None
                kind = pt.open_kind(literal if isinstance(literal, str) else None)
            self._path_arg(node, spec, kind)
            if qual == "torch.save":
                self._save(node)
        elif qual in pt.DATA_PARALLEL:
            self._data_parallel(node)
        elif qual == pt.DATA_PARALLEL_FUNCTION:
            self.report("MA201", self.span(node), "nn.parallel.data_parallel")
        elif qual in pt.DDP:
            self.has_ddp = True
            self._wrapper_target(node)
        elif qual == pt.INIT_PROCESS_GROUP:
            self.has_init = True
        elif qual in pt.DISTRIBUTED_SAMPLER:
            stmt = self.stmt
            target = None
            if (
                type(stmt) is ast.Assign
                and stmt.value is node
                and type(stmt.targets[0]) is ast.Name
            ):
                target = stmt.targets[0].id
            self.samplers.append((self.span(node), target))
        elif qual in pt.DATA_LOADER:
            self._loader(node)
        elif qual == "os.putenv" and node.args:
            self._environ_write("os.environ", node.args[0], node)

    def _wrapper_target(self, node: ast.Call) -> str | None:
        """``X`` in ``X = Wrapper(...)`` or ``X = Wrapper(...).cuda()`` (any method chain)."""
        stmt = self.stmt
        if type(stmt) is not ast.Assign or len(stmt.targets) != 1:
            return None
        value: ast.AST = stmt.value
        while value is not node and type(value) is ast.Call and type(value.func) is ast.Attribute:
            value = value.func.value
        target = stmt.targets[0]
        if value is node and type(target) is ast.Name:
            self.wrapped[target.id] = None
            return target.id
        return None

    def _data_parallel(self, node: ast.Call) -> None:
        target = self._wrapper_target(node)
        module = node.args[0] if node.args else None
        module = next((k.value for k in node.keywords if k.arg == "module"), module)
        stmt = self.stmt
        module_src = self.segment(module) if module is not None else None
        if module_src is not None and type(stmt) is ast.Assign and stmt.value is not node:
            # X = DataParallel(m).cuda() keeps the chain on the unwrapped module: X = m.cuda()
            whole_src, call_src = self.segment(stmt.value), self.segment(node)
            if whole_src is None or call_src is None or not whole_src.startswith(call_src):
                module_src = None
            else:
                module_src = f"{module_src}{whole_src[len(call_src) :]}"
        whole = target is not None and stmt is not None and type(stmt) is ast.Assign
        self.data_parallel.append(
            _DataParallel(
                self.span(node),
                self.span(stmt) if whole and stmt is not None else None,
                target,
                module_src,
                self.scope,
                node.lineno,
            )
        )

    def _loader(self, node: ast.Call) -> None:
        keywords = {k.arg: k.value for k in node.keywords if k.arg}
        shuffle = keywords.get("shuffle")
        dataset = node.args[0] if node.args else keywords.get("dataset")
        stmt = self.stmt
        target = None
        if type(stmt) is ast.Assign and stmt.value is node and type(stmt.targets[0]) is ast.Name:
            target = stmt.targets[0].id
        self.loaders.append(
            _Loader(
                self.span(node),
                target,
                shuffles=type(shuffle) is ast.Constant and shuffle.value is True,
                has_sampler="sampler" in keywords or "batch_sampler" in keywords,
                dataset=self.segment(dataset)
                if dataset is not None and type(dataset) in (ast.Name, ast.Attribute)
                else None,
            )
        )

    def _save(self, node: ast.Call) -> None:
        stmt = self.stmt
        whole = type(stmt) is ast.Expr and stmt.value is node
        words: set[str] = set()
        for guard_words in self.guards:
            words |= guard_words
        guard = "global" if self.scope.rank_guarded else self.guard_kind(words)
        self.saves.append(
            _Save(self.span(node), self.span(stmt) if whole and stmt else None, guard)
        )

    def _path_arg(self, node: ast.Call, spec: pt.PathArg, kind: pt.PathKind) -> None:
        arg = node.args[spec.index] if 0 <= spec.index < len(node.args) else None
        if arg is None:
            arg = next((k.value for k in node.keywords if k.arg == spec.keyword), None)
        if arg is None:
            return
        literal: ast.AST | None = None
        is_dir = spec.is_dir
        head = arg.args[0] if type(arg) is ast.Call and arg.args else arg
        if type(head) is ast.Name and head.id in self.constants:
            constant = self.constants[head.id]
            constant.kind = constant.kind or kind
            return
        if type(arg) is ast.Constant:
            literal = arg
        elif (
            type(arg) is ast.Call
            and self.qualname(arg.func) in ("os.path.join", "posixpath.join")
            and arg.args
            and type(arg.args[0]) is ast.Constant
        ):
            literal, is_dir = arg.args[0], True
        elif kind == "output" and any("data_url" in w for w in self.words(arg)):
            self.report("MA105", self.span(arg), self.segment(arg) or "")
            return
        if type(literal) is not ast.Constant or type(literal.value) is not str:
            return
        if not pt.is_local_path_literal(literal.value):
            return
        self.skip_strings.add(id(literal))
        self.paths.append(
            _PathSite(
                self.span(literal),
                pt.PathUse(literal.value, kind, is_dir),
                self.scope,
                literal.lineno,
            )
        )

    # ------------------------------------------------------------------ whole-file rules

    def run(self, tree: ast.Module) -> FileReport:
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
        self._find_path_constants(tree)
        for stmt in tree.body:
            self.visit(stmt)
        self._cloud_paths()
        self._distributed()
        if self.npu:
            self._npu()
        self.findings.sort(key=Finding.sort_key)
        return FileReport(self.path, self.findings, self._dedupe(self.fixes))

    def _find_path_constants(self, tree: ast.Module) -> None:
        seen: dict[str, int] = {}
        for stmt in tree.body:
            if type(stmt) is not ast.Assign:
                continue
            for target in stmt.targets:
                for sub in ast.walk(target):
                    if type(sub) is ast.Name:
                        seen[sub.id] = seen.get(sub.id, 0) + 1
            if len(stmt.targets) != 1 or type(stmt.targets[0]) is not ast.Name:
                continue
            name = stmt.targets[0].id
            value = stmt.value
            literal: str | None = None
            if type(value) is ast.Constant and isinstance(value.value, str):
                if not pt.is_local_path_literal(value.value):
                    continue
                literal = value.value
                last = value.value
            elif (
                type(value) is ast.Call
                and type(value.func) is ast.Attribute
                and value.func.attr == "join"
                and value.args
                and type(value.args[-1]) is ast.Constant
                and isinstance(value.args[-1].value, str)
                and pt.path_constant_name(name)
            ):
                last = value.args[-1].value
            else:
                continue
            base = last.rstrip("/").rsplit("/", 1)[-1]
            self.constants[name] = _PathConstant(
                name,
                stmt.end_lineno or stmt.lineno,
                literal,
                base,
                is_file=pt.looks_like_file(base),
                kind=None,
            )
        for assigned, count in seen.items():
            if count > 1:
                self.constants.pop(assigned, None)

    @staticmethod
    def _dedupe(fixes: list[Fix]) -> list[Fix]:
        return list(dict.fromkeys(fixes))

    def _entry_parse(self) -> _ParseSite | None:
        for parse in self.parses:
            if parse.args_name and parse.parser_name:
                return parse
        return None

    @staticmethod
    def _visible(parse: _ParseSite, scope: _Scope, line: int) -> bool:
        if parse.scope.is_module:
            return not scope.is_module or line > parse.end_line
        return parse.scope is scope and line > parse.end_line

    def _import_fix(self, codemod: Codemod, rule: str, code: str) -> Fix:
        anchor = self.first_import
        if "torch" in code and self.first_torch_import is not None:
            anchor = self.first_torch_import
        if anchor is not None:
            return Fix(codemod, rule, "insert-after", anchor, code=code)
        return Fix(codemod, rule, "insert-top", Span(1, 0, 1, 0), code=code)

    def _cloud_paths(self) -> None:
        parse = self._entry_parse()
        roots: dict[str, str | None] = {}
        default_code: dict[str, str] = {}
        constants: dict[pt.PathKind, list[_PathConstant]] = {"input": [], "output": []}
        for constant in self.constants.values():
            kind = constant.kind or pt.kind_from_name(constant.name)
            if constant.uses and kind and (constant.kind or pt.path_constant_name(constant.name)):
                constant.kind = kind
                constants[kind].append(constant)
        for kind, flag in pt.CHANNEL_FLAGS.items():
            uses = [p.use for p in self.paths if p.use.kind == kind]
            if flag in self.flags:
                declared = self.flags[flag]
                roots[kind] = pt.channel_root(uses, declared) if declared is not None else None
            elif len(constants[kind]) == 1 and not uses:
                roots[kind] = None  # the constant is the root (see _constant_fixes)
                constant = constants[kind][0]
                os_name = self.binding("os") or "os"
                default_code[kind] = (
                    f"{os_name}.path.dirname({constant.name})"
                    if constant.is_file
                    else constant.name
                )
            else:
                roots[kind] = pt.channel_root(uses) or pt.DEFAULT_ROOTS[kind]
        needs_os = False
        for site in self.paths:
            kind = site.use.kind
            rule = "MA101" if kind == "input" else "MA102"
            root = roots[kind]
            rel = pt.relative_to_root(site.use.value, root) if root else None
            fixes: list[Fix] = []
            if (
                parse is not None
                and rel is not None
                and self._visible(parse, site.scope, site.line)
            ):
                expr = f"{parse.args_name}.{pt.CHANNEL_FLAGS[kind]}"
                if rel:
                    needs_os = needs_os or self.binding("os") is None
                    expr = f"{self.binding('os') or 'os'}.path.join({expr}, {_py_str(rel)})"
                fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", site.span, code=expr))
            self.report(rule, site.span, repr(site.use.value), *fixes)
        for group_kind, group in constants.items():
            rule = "MA101" if group_kind == "input" else "MA102"
            routed = group_kind in default_code
            for constant in group:
                shown = repr(constant.value) if constant.value is not None else "a joined path"
                for span, scope, line in constant.uses:
                    fixes = []
                    if routed and parse is not None and self._visible(parse, scope, line):
                        expr = f"{parse.args_name}.{pt.CHANNEL_FLAGS[group_kind]}"
                        if constant.is_file:
                            needs_os = needs_os or self.binding("os") is None
                            base = _py_str(constant.base_name)
                            expr = f"{self.binding('os') or 'os'}.path.join({expr}, {base})"
                        fixes.append(
                            Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", span, code=expr)
                        )
                    self.report(rule, span, f"{constant.name} = {shown}", *fixes)
        first = self.parses[0] if self.parses else None
        for kind, flag in pt.CHANNEL_FLAGS.items():
            if first is None or flag in self.flags:
                continue
            fixes = []
            if first.parser_name:
                if kind in default_code:
                    default = default_code[kind]
                    needs_os = needs_os or ("path.dirname" in default and not self.binding("os"))
                else:
                    default = _py_str(roots[kind] or pt.DEFAULT_ROOTS[kind])
                help_text = f"ModelArts passes the {flag} channel's local directory here"
                code = (
                    f'{first.parser_name}.add_argument("--{flag}", type=str, '
                    f"default={default}, help={_py_str(help_text)})\n"
                )
                fixes.append(
                    Fix(Codemod.CLOUD_PATHS, "MA103", "insert-before", first.stmt, code=code)
                )
            self.report("MA103", first.stmt, f"--{flag}", *fixes)
        if needs_os:
            self.fixes.append(self._import_fix(Codemod.CLOUD_PATHS, "MA101", "import os\n"))

    def _distributed(self) -> None:
        parse = self._entry_parse()
        convertible = [
            dp
            for dp in self.data_parallel
            if dp.stmt and dp.module_src and parse and self._visible(parse, dp.scope, dp.line)
        ]
        distributed = self.has_ddp or self.has_init or bool(self.samplers)
        converting = bool(convertible) and parse is not None
        ddp_fixes: list[Fix] = []
        dist_name = self.binding("torch.distributed") or "dist"
        sampler_name = self.binding(*pt.DISTRIBUTED_SAMPLER) or "DistributedSampler"
        imports: dict[str, None] = {}
        for dp in self.data_parallel:
            fixes = []
            if converting and dp in convertible and dp.stmt:
                ddp_name = self.binding(*pt.DDP) or "DistributedDataParallel"
                if self.binding(*pt.DDP) is None:
                    imports["from torch.nn.parallel import DistributedDataParallel\n"] = None
                lines = []
                if dp.module_src != dp.target:
                    lines.append(f"{dp.target} = {dp.module_src}\n")
                lines.append(
                    f"if {dist_name}.is_initialized():\n    {dp.target} = {ddp_name}({dp.target})\n"
                )
                fixes.append(
                    Fix(Codemod.DDP, "MA201", "replace-stmt", dp.stmt, code="".join(lines))
                )
            self.report("MA201", dp.span, "DataParallel", *fixes)
        if converting and parse is not None:
            args = parse.args_name
            defaults = {"init_method": "None", "rank": "0", "world_size": "1"}
            types = {"init_method": "str", "rank": "int", "world_size": "int"}
            code = "".join(
                f'{parse.parser_name}.add_argument("--{flag}", type={types[flag]}, '
                f"default={defaults[flag]})\n"
                for flag in pt.INJECTED_DIST_FLAGS
                if flag not in self.flags
            )
            if code and not self.has_init:
                ddp_fixes.append(Fix(Codemod.DDP, "MA201", "insert-before", parse.stmt, code=code))
            if not self.has_init:
                torch_name = self.binding("torch") or "torch"
                if self.binding("torch") is None:
                    imports["import torch\n"] = None
                ddp_fixes.append(
                    Fix(
                        Codemod.DDP,
                        "MA201",
                        "insert-after",
                        parse.stmt,
                        code=(
                            f"if {args}.world_size > 1:\n"
                            f"    {dist_name}.init_process_group(\n"
                            f'        backend="nccl" if {torch_name}.cuda.is_available() '
                            f'else "gloo",\n'
                            f"        init_method={args}.init_method,\n"
                            f"        rank={args}.rank,\n"
                            f"        world_size={args}.world_size,\n"
                            f"    )\n"
                        ),
                    )
                )
        if not (distributed or converting):
            self._state_dict_saves()
            return
        if self.binding("torch.distributed") is None:
            imports["import torch.distributed as dist\n"] = None
        has_sampler = bool(self.samplers)
        sampled: dict[str, None] = {s: None for _, s in self.samplers if s}
        loaders_with_sampler: dict[str, None] = {
            ld.target: None for ld in self.loaders if ld.target and ld.has_sampler
        }
        adds_sampler = False
        if not has_sampler:
            for loader in self.loaders:
                if not loader.shuffles or loader.has_sampler:
                    continue
                fixes = []
                if loader.dataset:
                    adds_sampler = True
                    if loader.target:
                        loaders_with_sampler[loader.target] = None
                    init = f"{dist_name}.is_initialized()"
                    fixes = [
                        Fix(
                            Codemod.DDP,
                            "MA202",
                            "set-kwarg",
                            loader.span,
                            name="shuffle",
                            code=f"not {init}",
                        ),
                        Fix(
                            Codemod.DDP,
                            "MA202",
                            "set-kwarg",
                            loader.span,
                            name="sampler",
                            code=f"{sampler_name}({loader.dataset}) if {init} else None",
                        ),
                    ]
                if distributed:
                    self.report("MA202", loader.span, "", *fixes)
                else:
                    ddp_fixes.extend(fixes)
        if adds_sampler and self.binding(*pt.DISTRIBUTED_SAMPLER) is None:
            imports["from torch.utils.data.distributed import DistributedSampler\n"] = None
        if (has_sampler or adds_sampler) and not self.sets_epoch:
            epoch_loops = [loop for loop in self.all_loops if not loop.nested]
            for loop in epoch_loops:
                fixes = []
                sampler_var = next((n for n in loop.refs if n in sampled), None)
                loader_var = next((n for n in loop.refs if n in loaders_with_sampler), None)
                if loop.target and sampler_var:
                    code = f"{sampler_var}.set_epoch({loop.target})\n"
                elif loop.target and loader_var:
                    code = (
                        f"if isinstance({loader_var}.sampler, {sampler_name}):\n"
                        f"    {loader_var}.sampler.set_epoch({loop.target})\n"
                    )
                    if self.binding(*pt.DISTRIBUTED_SAMPLER) is None:
                        imports["from torch.utils.data.distributed import DistributedSampler\n"] = (
                            None
                        )
                else:
                    code = ""
                if code:
                    fixes.append(Fix(Codemod.DDP, "MA203", "prepend-body", loop.span, code=code))
                if has_sampler:
                    self.report("MA203", loop.span, "", *fixes)
                else:
                    ddp_fixes.extend(fixes)
            if has_sampler and not epoch_loops:
                self.report("MA203", self.samplers[0][0], "no epoch loop found")
        for save in self.saves:
            if save.guard == "global":
                continue
            if save.guard == "local":
                if distributed:
                    self.report("MA206", save.span)
                continue
            fixes = []
            if save.stmt:
                cond = f"not {dist_name}.is_initialized() or {dist_name}.get_rank() == 0"
                fixes.append(Fix(Codemod.DDP, "MA204", "wrap-stmt", save.stmt, code=cond))
            if distributed:
                self.report("MA204", save.span, "", *fixes)
            else:
                ddp_fixes.extend(fixes)
        self._state_dict_saves()
        if converting or any(f.codemod is Codemod.DDP for f in [*self.fixes, *ddp_fixes]):
            for code in imports:
                ddp_fixes.append(self._import_fix(Codemod.DDP, "MA201", code))
        self.fixes.extend(ddp_fixes)

    def _state_dict_saves(self) -> None:
        # X.state_dict() of a wrapped X (checkpoint dicts included) has 'module.' keys.
        for span, receiver in self.state_dicts:
            name = receiver.id
            if name not in self.wrapped:
                continue
            code = f'getattr({name}, "module", {name})'
            fix = Fix(Codemod.DDP, "MA205", "replace-expr", self.span(receiver), code=code)
            self.report("MA205", span, f"{name}.state_dict()", fix)

    def _npu(self) -> None:
        covered = {"MA301", "MA302", "MA303", "MA304", "MA306"}
        uncovered = [] if self.has_transfer else [c for c in self.candidates if c.rule in covered]
        imports_torch = self.first_torch_import is not None
        anchor = self.first_torch_import

        def placed(codemod: Codemod, code: str) -> Fix:
            if anchor is not None:
                return Fix(codemod, "MA305", "insert-after", anchor, code=code)
            return Fix(codemod, "MA305", "insert-top", Span(1, 0, 1, 0), code=code)

        auto_code = ("" if self.imports_torch_npu else "import torch_npu\n") + (
            "" if self.has_transfer else "from torch_npu.contrib import transfer_to_npu\n"
        )
        auto_fix = None
        if auto_code and ((imports_torch and not self.imports_torch_npu) or uncovered):
            auto_fix = placed(Codemod.NPU_AUTO, auto_code)
        manual_import = None
        if not self.imports_torch_npu and (imports_torch or uncovered):
            manual_import = placed(Codemod.NPU_MANUAL, "import torch_npu\n")
        for cand in self.candidates:
            if cand.rule in covered and self.has_transfer:
                continue
            fixes = [cand.fix] if cand.fix else []
            if cand.rule in covered and auto_fix:
                fixes.append(auto_fix)
            if cand.fix and manual_import:
                fixes.append(manual_import)
            self.report(cand.rule, cand.span, cand.detail, *fixes)
        if manual_import:
            fixes = [f for f in (auto_fix, manual_import) if f]
            self.report("MA305", anchor or Span(1, 0, 1, 0), "", *fixes)
        elif auto_fix:
            self.fixes.append(auto_fix)


# ---------------------------------------------------------------------- files


def check_source(source: str, path: str = "<string>", target: Target = Target.GPU) -> FileReport:
    """Check one file's text; a syntax error becomes an ``MA000`` finding."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning for odd escapes is not ours to raise
            tree = ast.parse(source, filename=path)
    except (SyntaxError, ValueError) as error:
        line = getattr(error, "lineno", None) or 1
        col = getattr(error, "offset", None) or 1
        detail = getattr(error, "msg", None) or str(error)
        message = f"skipped, cannot parse: {detail}"
        finding = Finding(path, line, col, "MA000", RULES["MA000"].severity, message)
        return FileReport(path, [finding], [], parsed=False)
    return _Analyzer(source, path, target).run(tree)


def read_source(path: Path) -> str | None:
    """The text of ``path`` (UTF-8, a BOM allowed), or None when it is not UTF-8."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return None


def check_file(path: Path, display: str | None = None, target: Target = Target.GPU) -> FileReport:
    """Check one file on disk; unreadable or non-UTF-8 files become ``MA000`` findings."""
    shown = display or str(path)
    try:
        source = read_source(path)
    except OSError as error:
        message = f"skipped, cannot read the file: {error.strerror or error}"
        return FileReport(
            shown, [Finding(shown, 1, 1, "MA000", RULES["MA000"].severity, message)], parsed=False
        )
    if source is None:
        message = "skipped: the file is not UTF-8 text"
        return FileReport(
            shown, [Finding(shown, 1, 1, "MA000", RULES["MA000"].severity, message)], parsed=False
        )
    return check_source(source, shown, target)


def python_files(paths: Iterable[Path]) -> Iterator[tuple[Path, str]]:
    """Every ``.py`` file under ``paths`` (files as given, directories walked with the project's
    ignore rules), as ``(path, display name)``, in a stable order. Missing paths are an error."""
    from majob.storage.ignore import walk_files

    paths = list(paths)
    for path in paths:  # every path is checked before any work starts
        if not path.exists():
            raise UserInputError(
                f"{path}: no such file or directory", hint="pass Python files or directories"
            )
    for path in paths:
        if path.is_file():
            yield path, str(path)
        elif path.is_dir():
            for rel in sorted(walk_files(path)):
                if rel.endswith(".py"):
                    yield path / rel, str(path / rel)
        else:
            raise UserInputError(
                f"{path}: not a file or a directory", hint="pass Python files or directories"
            )


def check_paths(paths: Iterable[Path], target: Target = Target.GPU) -> list[FileReport]:
    """Check every Python file under ``paths``."""
    return [check_file(path, shown, target) for path, shown in python_files(paths)]

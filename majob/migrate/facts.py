"""What one pass of the stdlib ``ast`` over a file records for the rules to decide on.

``FileFacts.collect`` walks the tree once and fills plain records: imports and their aliases,
argument parsers and their flags, path literals and path constants, loaders, epoch loops,
checkpoint saves, DataParallel wrappers, environment writes, and (for ``--target npu``) the CUDA
uses that may become NPU findings. Nothing here decides a rule; ``rules_paths``,
``rules_distributed`` and ``rules_npu`` turn these facts into findings and fixes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from majob.migrate import patterns as pt
from majob.migrate.findings import Fix, Span
from majob.migrate.rules import Codemod
from majob.migrate.source_text import SourceText

_STMT_TYPES = frozenset(ast.stmt.__subclasses__())
# Fields that never hold a node worth visiting (ctx is Load/Store; the rest are strings, ints).
_LEAF_FIELDS = frozenset({"ctx", "type_comment", "kind", "conversion", "lineno", "level", "op"})
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}
_BUILTINS = {"open": "builtins.open"}
_ATTR_QUALIFIED = (
    pt.CUDA_ONLY_QUALIFIED | pt.CUDA_EXTENSION | pt.APEX_FUSED | pt.JIT_SCRIPT | pt.FP64
) | {pt.CHANNELS_LAST}
_ATTR_TRIGGERS = frozenset(q.rsplit(".", 1)[1] for q in _ATTR_QUALIFIED)
TOP_OF_FILE = Span(1, 0, 1, 0)


@dataclass(eq=False)
class Scope:
    """A module, function, class or lambda body; compared by identity."""

    is_module: bool
    rank_guarded: bool = False
    function: str | None = None  # the function's name, for guards followed through calls
    span: Span | None = None  # the ``def`` line (name's line), for fixes at the top of the body


@dataclass
class ParseSite:
    """``args = parser.parse_args()`` (or ``parse_known_args``): where the parsed arguments live."""

    scope: Scope
    end_line: int
    stmt: Span
    args_name: str | None
    parser_name: str | None


@dataclass
class PathSite:
    """A local path literal in a path position (``open``, ``torch.save``, ``np.load``...)."""

    span: Span
    use: pt.PathUse
    scope: Scope
    line: int
    neutral: bool = False  # an existence test or a copy source: its direction comes from others
    mkdir: Span | None = None  # the os.mkdir/os.makedirs call without exist_ok around the literal


@dataclass
class PathConstant:
    """A module-level ``NAME = "path"`` (or ``os.path.join(..., "file")``) used as a path."""

    name: str
    line: int
    value: str | None  # the literal, for a plain string constant
    base_name: str  # the last literal segment (the file name for a file)
    is_file: bool
    kind: pt.PathKind | None  # from a use in a path position, else from the name
    literal_span: Span  # where the user edits it: the literal (or the joined call)
    routable: bool = True  # False when the value keeps a variable part (join('data', name))
    uses: list[tuple[Span, Scope, int]] = field(default_factory=list)


@dataclass
class DefaultPath:
    """A path literal that is the default of a function parameter or of an argparse flag."""

    name: str  # the parameter, or the flag's dest (used as ``args.<dest>``)
    span: Span
    value: str
    origin: str  # "parameter" or "argument"
    scope: Scope | None  # the function, for a parameter
    kind: pt.PathKind | None = None  # from a use in a path position


@dataclass
class Loader:
    """A ``DataLoader(...)`` call."""

    span: Span
    target: str | None
    shuffles: bool
    has_sampler: bool
    dataset: str | None
    scope: Scope | None = None


@dataclass
class EpochLoop:
    """A ``for`` loop whose target names an epoch; ``refs`` are the names used in its body."""

    span: Span
    target: str | None
    nested: bool
    scope: Scope | None = None
    refs: dict[str, None] = field(default_factory=dict)


@dataclass
class Save:
    """A ``torch.save(...)`` call and the rank guard around it."""

    span: Span
    stmt: Span | None  # the statement when the save is a whole expression statement
    guard: str | None  # None, "global" or "local"
    scope: Scope | None = None


@dataclass(frozen=True)
class CallSite:
    """A call of a function defined in the file (``f(...)``, ``self.f(...)``) and its guard."""

    callee: str
    guard: str | None
    caller: str | None  # the calling function's name, None at module level


@dataclass
class DataParallelCall:
    """A ``DataParallel(module)`` call; ``module_src``: what the wrapped name becomes under DDP."""

    span: Span
    stmt: Span | None
    target: str | None
    module_src: str | None
    scope: Scope
    line: int


@dataclass
class NpuCandidate:
    """An NPU finding kept until the end: whether it is reported depends on later imports."""

    rule: str
    span: Span
    detail: str
    fix: Fix | None = None


@dataclass(frozen=True)
class Site:
    """A place a rule reports as is, with the detail its message shows."""

    span: Span
    detail: str


@dataclass(frozen=True)
class ParseArgsCall:
    """A ``parse_args()`` call; ``whole`` when it is the whole value of ``name = ...``."""

    span: Span
    whole: bool


class FileFacts:
    """The facts of one file, filled by ``collect`` in a single pass over its tree.

    ``npu`` turns on the CUDA-use records (``candidates``); without it the pass skips them.
    """

    def __init__(self, source: str, npu: bool) -> None:
        self.npu = npu
        text = SourceText(source)
        self.span: Callable[[ast.AST], Span] = text.span
        self.segment: Callable[[ast.AST], str | None] = text.segment
        self.aliases: dict[str, str] = {}
        self.scope = Scope(is_module=True)
        self.stmt: ast.stmt | None = None
        self.guards: list[frozenset[str]] = []
        self.loops: list[EpochLoop] = []
        self.all_loops: list[EpochLoop] = []
        self.parses: list[ParseSite] = []
        self.flags: dict[str, str | None] = {}
        self.arg_defaults: set[int] = set()
        self.skip_strings: set[int] = set()
        self.paths: list[PathSite] = []
        self.constants: dict[str, PathConstant] = {}
        self.defaults: list[DefaultPath] = []
        self.in_add_argument = False
        self.in_display = False
        self.functions: dict[str, None] = {}
        self.call_sites: list[CallSite] = []
        self.loads: list[tuple[Span, ast.Name]] = []
        self.loaders: list[Loader] = []
        self.samplers: list[tuple[Span, str | None]] = []
        self.sets_epoch = False
        self.saves: list[Save] = []
        self.state_dicts: list[tuple[Span, ast.Name]] = []
        self.data_parallel: list[DataParallelCall] = []
        self.wrapped: dict[str, None] = {}
        self.has_ddp = False
        self.has_init = False
        self.imports_torch_npu = False
        self.has_transfer = False
        self.candidates: list[NpuCandidate] = []
        self.first_import: Span | None = None
        self.first_torch_import: Span | None = None
        # Sites that rules report as they are, in the order the pass met them.
        self.parse_args_calls: list[ParseArgsCall] = []
        self.writes_into_input: list[Site] = []
        self.data_parallel_functions: list[Site] = []
        self.environ_writes: list[Site] = []  # detail: the variable's name
        self.tcp_addresses: list[Site] = []
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
        kind = type(node)
        if kind in _STMT_TYPES:
            self.stmt = node  # type: ignore[assignment]
        handler = self._dispatch.get(kind)
        if handler is None:
            self.children(node)
        else:
            handler(node)

    def children(self, node: ast.AST) -> None:
        # visit() inlined: this loop runs for most of the ~6 nodes per source line.
        dispatch = self._dispatch
        kind = type(node)
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in node._fields if f not in _LEAF_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            items = value if type(value) is list else (value,)
            for item in items:
                child = type(item)
                if child in _STMT_TYPES:
                    self.stmt = item
                handler = dispatch.get(child)
                if handler is not None:
                    handler(item)
                elif isinstance(item, ast.AST):
                    self.children(item)

    # ------------------------------------------------------------------ helpers

    def qualname(self, node: ast.AST) -> str | None:
        """The imported name ``node`` stands for (``np.load`` -> ``numpy.load``), if known."""
        if type(node) is ast.Name:
            return self.aliases.get(node.id) or _BUILTINS.get(node.id)
        if type(node) is ast.Attribute:
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def binding(self, *qualnames: str) -> str | None:
        """The local name bound to any of ``qualnames`` by an import, for fixes to use."""
        for name, qual in self.aliases.items():
            if qual in qualnames:
                return name
        return None

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
                self.candidates.append(NpuCandidate("MA311", span, f"from {module}"))
            else:
                new = "torch_npu.npu" + module[len("torch.cuda") :]
                fix = Fix(Codemod.NPU_MANUAL, "MA302", "replace-module", span, code=new, old=module)
                self.candidates.append(NpuCandidate("MA302", span, f"from {module}", fix))

    def _imported(self, module: str, node: ast.stmt) -> None:
        if module == "torch_npu" or module.startswith("torch_npu."):
            self.imports_torch_npu = True
        if module == pt.TRANSFER_TO_NPU_MODULE:
            self.has_transfer = True
        if self.npu:
            rule = pt.module_blocker(module)
            if rule:
                self.candidates.append(NpuCandidate(rule, self.span(node), f"import {module}"))

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
                ParseSite(
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
        self.environ_writes.append(Site(self.span(node), key.value))

    def _if(self, node: ast.If) -> None:
        self.visit(node.test)
        words = self.words(node.test)
        if _compares_device_index_to_zero(node.test):
            words = words | {"local_rank"}  # `if gpu_id == 0:` is one process per node
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
        loop = EpochLoop(
            self.span(node),
            node.target.id if type(node.target) is ast.Name else None,
            nested=bool(self.loops),
            scope=self.scope,
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
            function: str = node.name  # type: ignore[attr-defined]
            self.functions[function] = None
            line = node.lineno  # type: ignore[attr-defined]
            self.scope = Scope(
                False,
                rank_guarded=self.guard_kind([function.lower()]) == "global",
                function=function,
                span=Span(line, 0, line, 0),
            )
            self._parameter_defaults(args, self.scope)
            for child in node.body:  # type: ignore[attr-defined]
                self.visit(child)
        else:
            self.scope = Scope(False)
            self.children(node)
        self.scope = outer

    def _parameter_defaults(self, args: ast.arguments, scope: Scope) -> None:
        """``def save(state, filename='checkpoint.pth')``: a path the user edits in the ``def``."""
        positional = [*args.posonlyargs, *args.args]
        pairs = list(
            zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
        )
        pairs += [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
        ]
        for arg, default in pairs:
            if type(default) is not ast.Constant or type(default.value) is not str:
                continue
            if not pt.is_local_path_literal(default.value):
                continue
            if not (pt.path_constant_name(arg.arg) or pt.looks_like_data_file(default.value)):
                continue
            self.skip_strings.add(id(default))
            self.defaults.append(
                DefaultPath(arg.arg, self.span(default), default.value, "parameter", scope)
            )

    # ------------------------------------------------------------------ expressions

    def _name(self, node: ast.Name) -> None:
        for loop in self.loops:
            loop.refs.setdefault(node.id, None)
        constant = self.constants.get(node.id)
        if (
            constant is not None
            and type(node.ctx) is ast.Load
            and not self.in_add_argument
            and not self.in_display
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
                self.candidates.append(NpuCandidate("MA306", span, "", fix))
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

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if type(value) is not str or len(value) > 64 or id(node) in self.skip_strings:
            return
        if self.npu:
            self._cuda_string(node, value, device_rule="MA304", nccl_rule="MA301")
        if value.startswith("tcp://") and id(node) not in self.arg_defaults:
            self.tcp_addresses.append(Site(self.span(node), value))

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

    def _joined_str(self, node: ast.JoinedStr) -> None:
        first = node.values[0] if node.values else None
        if type(first) is ast.Constant and isinstance(first.value, str):
            if self.npu and first.value.startswith("cuda:"):
                span = self.span(node)
                fix = Fix(
                    Codemod.NPU_MANUAL, "MA304", "replace-string", span, old="cuda:", new="npu:"
                )
                self.candidates.append(NpuCandidate("MA304", span, "f'cuda:...'", fix))
            if first.value.startswith("tcp://"):
                self.tcp_addresses.append(Site(self.span(node), "f'tcp://...'"))
        for value in node.values:
            if type(value) is ast.FormattedValue:
                self.visit(value)

    def _compare(self, node: ast.Compare) -> None:
        if self.npu:
            for side in (node.left, *node.comparators):
                if type(side) is not ast.Constant or type(side.value) is not str:
                    continue
                # A compared string is a comparison finding, not also a device string one.
                if self._cuda_string(side, side.value, device_rule="MA310", nccl_rule="MA312"):
                    self.skip_strings.add(id(side))
        self.children(node)

    # ------------------------------------------------------------------ calls

    def _call(self, node: ast.Call) -> None:
        func = node.func
        self._call_site(func)
        if self._is_display(func):
            # print(PATH) or log.info(PATH) shows a path; it does not use it.
            outer, self.in_display = self.in_display, True
            self.children(node)
            self.in_display = outer
            return
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

    def _is_display(self, func: ast.AST) -> bool:
        if type(func) is ast.Name:
            return func.id == "print" and "print" not in self.aliases
        return type(func) is ast.Attribute and func.attr in pt.DISPLAY_METHODS

    def _call_site(self, func: ast.AST) -> None:
        """Calls of local functions, for rank guards that the caller holds (``if rank == 0:``)."""
        if type(func) is ast.Name:
            callee = func.id
        elif (
            type(func) is ast.Attribute
            and type(func.value) is ast.Name
            and func.value.id not in self.aliases  # torch.save is no call of a local save()
        ):
            callee = func.attr  # self.save_snapshot(...), trainer.save(...)
        else:
            return
        if self.scope.rank_guarded:
            guard: str | None = "global"
        else:
            guard = self.guard_kind(self._guard_words()) if self.guards else None
        self.call_sites.append(CallSite(callee, guard, self.scope.function))

    def _guard_words(self) -> set[str]:
        words: set[str] = set()
        for guard_words in self.guards:
            words |= guard_words
        return words

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        attr = func.attr
        if attr == "cuda":
            if self.npu and self.qualname(func) != "torch.cuda":
                span = self.span(func)
                fix = Fix(Codemod.NPU_MANUAL, "MA303", "rename-attr", span, code="npu")
                self.candidates.append(NpuCandidate("MA303", span, "", fix))
        elif attr == "state_dict" and not node.args and type(func.value) is ast.Name:
            self.state_dicts.append((self.span(node), func.value))
        elif attr == "load_state_dict" and type(func.value) is ast.Name:
            self.loads.append((self.span(func.value), func.value))
        elif attr == "double" and not node.args and self.npu:
            self.candidates.append(NpuCandidate("MA326", self.span(func), ".double()"))
        elif attr == "parse_args":
            stmt = self.stmt
            whole = (
                type(stmt) is ast.Assign
                and stmt.value is node
                and len(stmt.targets) == 1
                and type(stmt.targets[0]) is ast.Name
            )
            self.parse_args_calls.append(ParseArgsCall(self.span(node), whole))
        elif attr == "add_argument":
            self._add_argument(node)
        elif attr == "set_epoch":
            self.sets_epoch = True
        elif attr == "setdefault" and node.args:
            self._environ_write(self.qualname(func.value), node.args[0], node)
        elif attr in pt.PATH_METHODS:
            self._path_arg(node, pt.PATH_METHODS[attr], pt.PATH_METHODS[attr].kind)

    def _add_argument(self, node: ast.Call) -> None:
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        dest = pt.argument_dest(
            [a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str)],
            next(
                (
                    k.value.value
                    for k in node.keywords
                    if k.arg == "dest"
                    and type(k.value) is ast.Constant
                    and isinstance(k.value.value, str)
                ),
                None,
            ),
        )
        if default is not None and dest in pt.INJECTED_DIST_FLAGS:
            # --init_method's default is replaced by what ModelArts passes on a cluster.
            self.arg_defaults.add(id(default))
        if (
            dest
            and dest not in pt.CHANNEL_FLAGS.values()
            and type(default) is ast.Constant
            and type(default.value) is str
            and pt.is_local_path_literal(default.value)
            and (pt.path_argument_name(dest) or pt.looks_like_data_file(default.value))
        ):
            self.skip_strings.add(id(default))
            self.defaults.append(
                DefaultPath(dest, self.span(default), default.value, "argument", None)
            )
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
        if spec is not None and not self.in_display:
            kind = spec.kind
            if qual in pt.OPEN_CALLS:
                mode = node.args[1] if len(node.args) > 1 else None
                mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
                literal = mode.value if type(mode) is ast.Constant else None
                kind = pt.open_kind(literal if isinstance(literal, str) else None)
            if qual in pt.MEMMAP_CALLS:
                mode = next((k.value for k in node.keywords if k.arg == "mode"), None)
                literal = mode.value if type(mode) is ast.Constant else None
                kind = "output" if isinstance(literal, str) and "+" in literal else kind
            self._path_arg(node, spec, kind, mkdir=qual in pt.MKDIR_CALLS)
            if qual == "torch.save":
                self._save(node)
        if qual in pt.NEUTRAL_PATH_CALLS:
            self._path_arg(node, pt.NEUTRAL_PATH_CALLS[qual], "input", neutral=True)
        if spec is not None:
            pass
        elif qual in pt.DATA_PARALLEL:
            self._data_parallel(node)
        elif qual == pt.DATA_PARALLEL_FUNCTION:
            self.data_parallel_functions.append(Site(self.span(node), "nn.parallel.data_parallel"))
        elif qual in pt.DDP:
            self.has_ddp = True
            self._wrapper_target(node)
        elif qual == pt.INIT_PROCESS_GROUP:
            self.has_init = True
        elif qual in pt.DISTRIBUTED_SAMPLER:
            self.samplers.append((self.span(node), self._assigned_name(node)))
        elif qual in pt.DATA_LOADER:
            self._loader(node)
        elif qual == "os.putenv" and node.args:
            self._environ_write("os.environ", node.args[0], node)

    def _assigned_name(self, node: ast.Call) -> str | None:
        """``X`` in ``X = node`` (the first target of the statement)."""
        stmt = self.stmt
        if type(stmt) is ast.Assign and stmt.value is node and type(stmt.targets[0]) is ast.Name:
            return stmt.targets[0].id
        return None

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
            DataParallelCall(
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
        self.loaders.append(
            Loader(
                self.span(node),
                self._assigned_name(node),
                shuffles=type(shuffle) is ast.Constant and shuffle.value is True,
                has_sampler="sampler" in keywords or "batch_sampler" in keywords,
                dataset=self.segment(dataset)
                if dataset is not None and type(dataset) in (ast.Name, ast.Attribute)
                else None,
                scope=self.scope,
            )
        )

    def _save(self, node: ast.Call) -> None:
        stmt = self.stmt
        whole = type(stmt) is ast.Expr and stmt.value is node
        guard = "global" if self.scope.rank_guarded else self.guard_kind(self._guard_words())
        self.saves.append(
            Save(self.span(node), self.span(stmt) if whole and stmt else None, guard, self.scope)
        )

    def _path_arg(
        self,
        node: ast.Call,
        spec: pt.PathArg,
        kind: pt.PathKind,
        neutral: bool = False,
        mkdir: bool = False,
    ) -> None:
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
            if not neutral:
                constant.kind = constant.kind or kind
            return
        if not neutral and self._default_used(head, kind):
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
            self.writes_into_input.append(Site(self.span(arg), self.segment(arg) or ""))
            return
        if type(literal) is not ast.Constant or type(literal.value) is not str:
            return
        if not pt.is_local_path_literal(literal.value):
            return
        self.skip_strings.add(id(literal))
        exist_ok = any(k.arg == "exist_ok" for k in node.keywords)
        self.paths.append(
            PathSite(
                self.span(literal),
                pt.PathUse(literal.value, kind, is_dir),
                self.scope,
                literal.lineno,
                neutral=neutral,
                mkdir=self.span(node) if mkdir and arg is literal and not exist_ok else None,
            )
        )

    def _default_used(self, head: ast.AST, kind: pt.PathKind) -> bool:
        """``head`` names a parameter or ``args.<flag>`` with a path default: give it ``kind``."""
        found = False
        for default in self.defaults:
            if default.origin == "parameter":
                hit = type(head) is ast.Name and head.id == default.name
                hit = hit and default.scope is self.scope
            else:
                hit = type(head) is ast.Attribute and head.attr == default.name
            if hit:
                default.kind = default.kind or kind
                found = True
        return found

    # ------------------------------------------------------------------ module level

    def collect(self, tree: ast.Module) -> None:
        """Record the facts of ``tree``, the module parsed from this file's source."""
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

    def _find_path_constants(self, tree: ast.Module) -> None:
        """Module-level ``NAME = "path"`` constants; a name assigned twice is none."""
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
            literal_node: ast.AST = value
            routable = True
            elif_join = (
                type(value) is ast.Call
                and type(value.func) is ast.Attribute
                and value.func.attr == "join"
                and bool(value.args)
            )
            if literal is not None:
                pass
            elif (
                elif_join
                and type(value) is ast.Call
                and type(value.args[-1]) is ast.Constant
                and isinstance(value.args[-1].value, str)
                and pt.path_constant_name(name)
            ):
                last = value.args[-1].value
            elif (
                elif_join
                and type(value) is ast.Call
                and type(value.args[0]) is ast.Constant
                and isinstance(value.args[0].value, str)
                and pt.is_local_path_literal(value.args[0].value)
            ):
                # data_dir = os.path.join('data', dataset): 'data' is what the user edits.
                literal_node, routable = value.args[0], False
                last = value.args[0].value
                self.skip_strings.add(id(literal_node))
            else:
                continue
            base = last.rstrip("/").rsplit("/", 1)[-1]
            self.constants[name] = PathConstant(
                name,
                stmt.end_lineno or stmt.lineno,
                literal,
                base,
                is_file=pt.looks_like_file(base),
                kind=None,
                literal_span=self.span(literal_node),
                routable=routable,
            )
        for assigned, count in seen.items():
            if count > 1:
                self.constants.pop(assigned, None)

    # ------------------------------------------------------------------ queries for the rules

    def entry_parse(self) -> ParseSite | None:
        """The first ``args = parser.parse_args()`` with both names known: fixes refer to them."""
        for parse in self.parses:
            if parse.args_name and parse.parser_name:
                return parse
        return None

    @staticmethod
    def visible(parse: ParseSite, scope: Scope, line: int) -> bool:
        """Whether the parsed arguments of ``parse`` are in scope at ``line`` of ``scope``."""
        if parse.scope.is_module:
            return not scope.is_module or line > parse.end_line
        return parse.scope is scope and line > parse.end_line

    def import_fix(self, codemod: Codemod, rule: str, code: str) -> Fix:
        """Insert the import ``code`` after the first import (the first torch import for torch)."""
        anchor = self.first_import
        if "torch" in code and self.first_torch_import is not None:
            anchor = self.first_torch_import
        return insert_after(anchor, codemod, rule, code)


def _named(node: ast.expr) -> TypeGuard[ast.Name | ast.Attribute]:
    return type(node) in (ast.Name, ast.Attribute)


def _compares_device_index_to_zero(test: ast.AST) -> bool:
    """``gpu == 0`` / ``self.gpu_id == 0``: the first process of a node, not of the job."""
    for sub in ast.walk(test):
        if type(sub) is not ast.Compare or len(sub.comparators) != 1:
            continue
        sides = (sub.left, sub.comparators[0])
        zero = any(type(x) is ast.Constant and x.value == 0 for x in sides)
        named = [x.id if isinstance(x, ast.Name) else x.attr for x in sides if _named(x)]
        if zero and any(pt.device_index_name(n) for n in named):
            return True
    return False


def insert_after(anchor: Span | None, codemod: Codemod, rule: str, code: str) -> Fix:
    """Insert ``code`` after the statement at ``anchor``, or at the top of the file without one."""
    if anchor is not None:
        return Fix(codemod, rule, "insert-after", anchor, code=code)
    return Fix(codemod, rule, "insert-top", TOP_OF_FILE, code=code)

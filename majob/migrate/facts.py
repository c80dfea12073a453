"""What one pass of the stdlib ``ast`` over a file records for the rules to decide on.

``FileFacts.collect`` walks the tree once and fills plain records: imports and their aliases,
argument parsers and their flags, path literals and path constants, loaders, epoch loops,
checkpoint saves, DataParallel wrappers, environment writes, and (for ``--target npu``) the CUDA
uses that may become NPU findings. Nothing here decides a rule; ``rules_paths``,
``rules_distributed`` and ``rules_npu`` turn these facts into findings and fixes.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any

from majob.migrate import patterns as pt
from majob.migrate.facts_base import (
    TOP_OF_FILE,
    CallSite,
    DataParallelCall,
    DefaultPath,
    EpochLoop,
    FactsBase,
    Loader,
    NpuCandidate,
    ParseArgsCall,
    ParseSite,
    PathConstant,
    PathSite,
    Save,
    Scope,
    Site,
    insert_after,
)
from majob.migrate.facts_distributed import DistributedFacts, guard_words, unwrap_tested
from majob.migrate.facts_npu import ATTR_TRIGGERS, NpuFacts
from majob.migrate.facts_paths import PathFacts
from majob.migrate.findings import Fix, Span
from majob.migrate.rules import Codemod

__all__ = [
    "TOP_OF_FILE",
    "CallSite",
    "DataParallelCall",
    "DefaultPath",
    "EpochLoop",
    "FileFacts",
    "Loader",
    "NpuCandidate",
    "ParseArgsCall",
    "ParseSite",
    "PathConstant",
    "PathSite",
    "Save",
    "Scope",
    "Site",
    "insert_after",
]

_STMT_TYPES = frozenset(ast.stmt.__subclasses__())
# Fields that never hold a node worth visiting (ctx is Load/Store; the rest are strings, ints).
# Fields that never hold a node worth visiting: ctx is Load/Store, op an operator, and the rest
# are identifiers, strings and ints (skipping them is most of what makes the walk cheap).
_LEAF_FIELDS = frozenset(
    {"ctx", "op", "ops", "type_comment", "kind", "conversion", "lineno", "level", "is_async"}
    | {"id", "attr", "arg", "name", "module", "simple", "tag"}
)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


class FileFacts(PathFacts, DistributedFacts, NpuFacts, FactsBase):
    """The facts of one file, filled by ``collect`` in a single pass over its tree.

    ``npu`` turns on the CUDA-use records (``candidates``); without it the pass skips them. The
    pass keeps the context (scope, guards, loops, the current statement) and hands each node to
    the collector of its rule family: ``PathFacts`` (MA1xx), ``DistributedFacts`` (MA2xx),
    ``NpuFacts`` (MA3xx).
    """

    def __init__(self, source: str, npu: bool) -> None:
        super().__init__(source, npu)

    # ------------------------------------------------------------------ traversal

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind in _STMT_TYPES:
            self.stmt = node  # type: ignore[assignment]
        handler = _HANDLERS.get(kind)
        if handler is None:
            self.children(node)
        else:
            handler(self, node)

    def children(self, node: ast.AST) -> None:
        # visit() inlined: this loop runs for most of the ~6 nodes per source line.
        kind = type(node)
        fields = _CHILD_FIELDS.get(kind)
        if fields is None:
            fields = _CHILD_FIELDS[kind] = tuple(f for f in node._fields if f not in _LEAF_FIELDS)
        for name in fields:
            value = getattr(node, name, None)
            if value is None:
                continue
            for item in value if type(value) is list else (value,):
                child = type(item)
                if child in _STMT_TYPES:
                    self.stmt = item
                handler = _HANDLERS.get(child)
                if handler is not None:
                    handler(self, item)
                elif child in _NODE_TYPES:
                    self.children(item)

    # ------------------------------------------------------------------ helpers

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
        if name is not None:
            self._object_built(name, value)
            self._derived_path(name, value)
        if target is not None and type(target) is ast.Subscript:
            self._environ_write(self.qualname(target.value), target.slice, node)
        elif target is not None and type(target) is ast.Attribute:
            self._config_path(target.attr, value)
        self.children(node)

    def _if(self, node: ast.If) -> None:
        self.visit(node.test)
        subs = list(ast.walk(node.test))  # one walk for every question about the test
        words = guard_words(node.test, self.words(node.test, subs), subs)
        kind = self.guard_kind(words)
        if kind and not node.orelse and type(node.body[-1]) in (ast.Return, ast.Continue):
            # `if rank != 0: return` guards what follows in the same scope.
            self.scope.rank_guarded = True
        self.guards.append(words)
        tested = unwrap_tested(subs)
        self.unwrap_tested.extend(tested)
        for child in node.body:
            self.visit(child)
        for child in node.orelse:
            self.visit(child)
        del self.unwrap_tested[len(self.unwrap_tested) - len(tested) :]
        self.guards.pop()

    def _if_exp(self, node: ast.IfExp) -> None:
        # `m.module.state_dict() if hasattr(m, "module") else m.state_dict()` unwraps already.
        tested = unwrap_tested(list(ast.walk(node.test)))
        self.unwrap_tested.extend(tested)
        self.children(node)
        del self.unwrap_tested[len(self.unwrap_tested) - len(tested) :]

    def _while(self, node: ast.While) -> None:
        self.scope.loops_or_syncs = True
        self.children(node)

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        self.scope.loops_or_syncs = True
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
            self.function_params[function] = [a.arg for a in [*args.posonlyargs, *args.args]]
            for child in node.body:  # type: ignore[attr-defined]
                self.visit(child)
        else:
            self.scope = Scope(False)
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
            elif attr == "is_nccl_available" and self.qualname(node) == pt.NCCL_AVAILABLE:
                self._nccl_available(node)
            if attr in ATTR_TRIGGERS:
                qual = self.qualname(node)
                if qual:
                    self._qualified_use(qual, node)
        self.visit(value)

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if type(value) is not str or len(value) > 64 or id(node) in self.skip_strings:
            return
        if self.npu:
            self._cuda_string(node, value, device_rule="MA304", nccl_rule="MA301")
        if value.startswith("tcp://") and id(node) not in self.injected_defaults:
            self.tcp_addresses.append(Site(self.span(node), value))

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
        if node.args:
            self._call_literals(node)
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
            self._implicit_dir(node, qual)
        for keyword in node.keywords:
            if type(keyword.value) is ast.Constant and keyword.arg:
                self._config_path(keyword.arg, keyword.value)
        self.children(node)

    def _is_display(self, func: ast.AST) -> bool:
        if type(func) is ast.Name:
            return func.id == "print" and "print" not in self.aliases
        return type(func) is ast.Attribute and func.attr in pt.DISPLAY_METHODS

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        attr = func.attr
        stmt = self.stmt
        if attr in ("parse_args", "parse_known_args") and type(stmt) is not ast.Assign and stmt:
            # `return parser.parse_known_args()[0]` (YOLOv5's parse_opt): the parser is known,
            # the parsed arguments have no name here.
            receiver = func.value
            parser = receiver.id if type(receiver) is ast.Name else None
            end = stmt.end_lineno or stmt.lineno
            self.parses.append(ParseSite(self.scope, end, self.span(stmt), None, parser))
        if attr == "cuda":
            if self.npu and self.qualname(func) != "torch.cuda":
                span = self.span(func)
                fix = Fix(Codemod.NPU_MANUAL, "MA303", "rename-attr", span, code="npu")
                self.candidates.append(NpuCandidate("MA303", span, "", fix))
        elif (
            attr == "state_dict"
            and not node.args
            and type(func.value) is ast.Name
            and func.value.id not in self.unwrap_tested
        ):
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
        elif attr in pt.PATHLIB_WRITE_METHODS:
            self._pathlib_write(func.value)
        elif attr in pt.PATH_METHODS:
            self._path_arg(node, pt.PATH_METHODS[attr], pt.PATH_METHODS[attr].kind)

    def _qualified_call(self, node: ast.Call, qual: str) -> None:
        spec = pt.PATH_CALLS.get(qual)
        if qual == "torch.load":
            self._map_location_keys(node)
        elif qual in pt.PATHLIB_CALLS:
            self._pathlib_call(node)
        if qual in pt.NEUTRAL_PATH_CALLS:  # shutil.copyfile: its source here, its target below
            self._path_arg(node, pt.NEUTRAL_PATH_CALLS[qual], "input", neutral=True)
        if spec is not None:
            self._path_call(node, qual, spec)
        elif qual in pt.DATA_PARALLEL:
            self._data_parallel(node)
        elif qual == pt.DATA_PARALLEL_FUNCTION:
            self.data_parallel_functions.append(Site(self.span(node), "nn.parallel.data_parallel"))
        elif qual in pt.DDP:
            self.has_ddp = True
            self._wrapper_target(node)
        elif qual == pt.INIT_PROCESS_GROUP:
            self.has_init = True
            self._init_process_group(node)
        elif qual.startswith("torch.distributed.") and qual not in pt.RANK_QUERIES:
            self.scope.loops_or_syncs = True  # a barrier or collective: every rank must get here
        elif qual in pt.DISTRIBUTED_SAMPLER:
            self.samplers.append((self.span(node), self._assigned_name(node)))
        elif qual in pt.DATA_LOADER:
            self._loader(node)
        elif qual == "os.putenv" and node.args:
            self._environ_write("os.environ", node.args[0], node)

    def _path_call(self, node: ast.Call, qual: str, spec: pt.PathArg) -> None:
        """A call that takes a path; ``open`` and ``np.memmap`` write when their mode says so."""
        kind = spec.kind
        if qual in pt.OPEN_CALLS or qual in pt.MEMMAP_CALLS:
            mode = node.args[1] if qual in pt.OPEN_CALLS and len(node.args) > 1 else None
            mode = next((k.value for k in node.keywords if k.arg == "mode"), mode)
            literal = mode.value if type(mode) is ast.Constant else None
            literal = literal if isinstance(literal, str) else None
            if qual in pt.OPEN_CALLS:
                kind = pt.open_kind(literal)
            elif literal is not None and "+" in literal:
                kind = "output"
        self._path_arg(node, spec, kind, mkdir=qual in pt.MKDIR_CALLS)
        if qual == "torch.save":
            self._save(node)

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

    # ------------------------------------------------------------------ queries for the rules

    def import_fix(self, codemod: Codemod, rule: str, code: str) -> Fix:
        """Insert the import ``code`` after the first import (the first torch import for torch)."""
        anchor = self.first_import
        if "torch" in code and self.first_torch_import is not None:
            anchor = self.first_torch_import
        return insert_after(anchor, codemod, rule, code)


def _all_node_types(base: type) -> set[type]:
    found: set[type] = {base}
    sub: type
    for sub in base.__subclasses__():
        found |= _all_node_types(sub)
    return found


_NODE_TYPES = frozenset(_all_node_types(ast.AST))
# One table for every instance, looked up by the node's exact type: a per-instance table of
# bound methods would make each FileFacts a reference cycle (see checker: no cycle collection).
_HANDLERS: dict[type, Callable[[FileFacts, Any], None]] = {
    ast.Import: FileFacts._import,
    ast.ImportFrom: FileFacts._import_from,
    ast.Call: FileFacts._call,
    ast.Attribute: FileFacts._attribute,
    ast.Name: FileFacts._name,
    ast.Constant: FileFacts._constant,
    ast.JoinedStr: FileFacts._joined_str,
    ast.Compare: FileFacts._compare,
    ast.Assign: FileFacts._assign,
    ast.If: FileFacts._if,
    ast.IfExp: FileFacts._if_exp,
    ast.For: FileFacts._for,
    ast.AsyncFor: FileFacts._for,
    ast.While: FileFacts._while,
    ast.FunctionDef: FileFacts._function,
    ast.AsyncFunctionDef: FileFacts._function,
    ast.ClassDef: FileFacts._function,
    ast.Lambda: FileFacts._function,
}

"""The calls of the single pass: each call handed to the collectors it concerns, by the method
it calls (``x.cuda()``, ``parser.add_argument``) or the imported name it calls (``torch.save``,
``open``, ``DataLoader``). Calls are where most facts are, so this is the pass's busiest switch."""

from __future__ import annotations

import ast

from majob.migrate import frameworks as fw
from majob.migrate import patterns as pt
from majob.migrate.facts.argparse_flags import PARSE_METHODS, ArgparseFacts
from majob.migrate.facts.args_flow import SPAWN
from majob.migrate.facts.distributed import DistributedFacts
from majob.migrate.facts.frameworks import FrameworkFacts
from majob.migrate.facts.named_paths import NamedPathFacts
from majob.migrate.facts.npu import NpuFacts
from majob.migrate.facts.records import NpuCandidate, Site
from majob.migrate.facts.resume import ResumeFacts
from majob.migrate.facts.walk import TreeWalk

# Every method name ``_method_call`` acts on: any other method call is done with at once.
_WATCHED_METHODS = frozenset(
    {*PARSE_METHODS, "cuda", "state_dict", "load_state_dict", "double", "add_argument"}
    | {"set_epoch", "setdefault", *pt.PATHLIB_WRITE_METHODS, *pt.PATH_METHODS}
    | fw.KNOWN_METHODS
)

# Every imported name ``_qualified_call`` acts on (and any torch.distributed call).
_WATCHED_CALLS = frozenset(
    {*pt.PATH_CALLS, "torch.load", *pt.PATHLIB_CALLS, *pt.NEUTRAL_PATH_CALLS, *pt.DATA_PARALLEL}
    | {pt.DATA_PARALLEL_FUNCTION, *pt.DDP, pt.INIT_PROCESS_GROUP, *pt.DISTRIBUTED_SAMPLER}
    | {*pt.DATA_LOADER, SPAWN, "os.putenv"}
)


class CallFacts(
    FrameworkFacts,
    NamedPathFacts,
    ArgparseFacts,
    DistributedFacts,
    NpuFacts,
    ResumeFacts,
    TreeWalk,
):
    """Dispatches calls to the path, argparse, distributed and NPU collectors."""

    def _call(self, node: ast.Call) -> None:
        func = node.func
        self._call_site(func)
        self._resume_call(node, func)
        if node.args or node.keywords:
            self._call_literals(node)
        if type(func) is ast.Name and func.id == "exec":
            self._exec_call(node)
        if self._is_display(func):
            # print(PATH) or log.info(PATH) shows a path; it does not use it.
            outer, self.in_display = self.in_display, True
            self.children(node)
            self.in_display = outer
            return
        if type(func) is ast.Attribute:
            self._method_call(node, func)
            if func.attr == "join" and len(node.args) > 1:
                self.join_tails.update(id(a) for a in node.args[1:] if type(a) is ast.Name)
            if func.attr == "add_argument":
                # A constant used as an argument's default is the default, not a path use.
                self.in_add_argument = True
                self.children(node)
                self.in_add_argument = False
                return
        qual = self.qualname(func)
        if qual:
            self._qualified_call(node, qual)
            if qual in pt.IMPLICIT_DIR_CALLS:
                self._implicit_dir(node, qual)
            if qual in fw.KNOWN_CALLS:
                self._framework_call(node, qual)
        # A keyword given to a function or class of this file is a call literal (judged by what
        # the parameter does there), not a config value: SimpleNamespace(ROOT="datasets/coco").
        if not (type(func) is ast.Name and func.id in self.defined_names):
            for keyword in node.keywords:
                value = keyword.value
                if type(value) is ast.Constant and type(value.value) is str and keyword.arg:
                    self._config_path(keyword.arg, value)
        self.children(node)

    def _is_display(self, func: ast.AST) -> bool:
        if type(func) is ast.Name:
            return func.id == "print" and "print" not in self.aliases
        return type(func) is ast.Attribute and func.attr in pt.DISPLAY_METHODS

    def _method_call(self, node: ast.Call, func: ast.Attribute) -> None:
        attr = func.attr
        if attr not in _WATCHED_METHODS:
            return
        if attr in PARSE_METHODS:
            self._parse_call(node, func)
        elif attr == "cuda":
            if self.npu:
                self._cuda_method(func)
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
        elif attr == "add_argument":
            self._add_argument(node)
            if type(func.value) is ast.Name:
                name = func.value.id
                self.parser_sizes[name] = self.parser_sizes.get(name, 0) + 1
        elif attr == "set_epoch":
            self.sets_epoch = True
        elif attr == "setdefault" and node.args:
            self._environ_write(self.qualname(func.value), node.args[0], node)
        elif attr in pt.PATHLIB_WRITE_METHODS:
            self._pathlib_write(func.value)
        elif attr in pt.PATH_METHODS:
            self._path_arg(node, pt.PATH_METHODS[attr], pt.PATH_METHODS[attr].kind)
        elif attr in fw.KNOWN_METHODS:
            self._framework_method(node, func)

    def _qualified_call(self, node: ast.Call, qual: str) -> None:
        if qual not in _WATCHED_CALLS and not qual.startswith("torch.distributed."):
            return
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
        elif qual == SPAWN:
            self._spawned(node)
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

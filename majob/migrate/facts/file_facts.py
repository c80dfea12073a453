"""The single pass over a file: ``FileFacts.collect`` walks the tree once and fills the records
the rules decide on. It keeps the context (the scope, rank guards, epoch loops, the current
statement) and hands each node to the collector of its rule family; nothing here decides a rule.

The collectors, one module each: ``imports``, ``calls`` (the dispatch of a call), ``paths`` (path
literals in path positions), ``named_paths`` (path constants and defaults), ``argparse_flags``,
``distributed`` (loaders, samplers, saves, wrappers, guards through calls, environment writes)
and ``npu`` (CUDA uses, for ``--target npu``); ``walk`` is the traversal, ``state`` what the pass
knows and recorded, ``records`` the records themselves.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from majob.migrate import patterns as pt
from majob.migrate.facts.args_flow import ArgsFlowFacts
from majob.migrate.facts.calls import CallFacts
from majob.migrate.facts.distributed import guard_words, unwrap_tested
from majob.migrate.facts.imports import ImportFacts
from majob.migrate.facts.nodes import subnodes
from majob.migrate.facts.records import EpochLoop, PathSite, Scope, Site
from majob.migrate.findings import Span

CHANNEL_GLOBALS = frozenset({"data_url", "train_url"})
ARGUMENT_PARSERS = frozenset({"argparse.ArgumentParser", "transformers.HfArgumentParser"})


class FileFacts(CallFacts, ImportFacts):
    """The facts of one file, filled by ``collect`` in a single pass over its tree.

    ``npu`` turns on the CUDA-use records (``candidates``); without it the pass skips them.
    """

    def collect(self, tree: ast.Module) -> None:
        """Record the facts of ``tree``, the module parsed from this file's source."""
        self._first_imports(tree)
        self._find_path_constants(tree)
        for stmt in tree.body:
            self.visit(stmt)
        self._settle_flag_candidates()
        self.flag_defaults()

    # ------------------------------------------------------------------ statements

    def _assign(self, node: ast.Assign) -> None:
        value = node.value
        call = value.value if type(value) is ast.Subscript else value
        target = node.targets[0] if len(node.targets) == 1 else None
        name = target.id if type(target) is ast.Name else None
        self._parse_assigned(node, call, target)
        if target is not None and self.returns_args:
            self._args_assigned(target, value, node.lineno)
        if name in CHANNEL_GLOBALS and self.scope.is_module:
            # train_url = out_dir before a configurator: the global it lets through
            text = value.value if type(value) is ast.Constant else None
            self.flags[name] = text if isinstance(text, str) else None
        if (
            name is not None
            and type(value) is ast.Call
            and self.qualname(value.func) in ARGUMENT_PARSERS
        ):
            self.argparse_parsers.add(name)  # parser = argparse.ArgumentParser(...)
        if name is not None:
            self._object_built(name, value)
            self._derived_path(name, value)
        if name in CHANNEL_GLOBALS:
            # train_url = out_dir: the constant is the channel's default, not a use of it
            outer, self.in_add_argument = self.in_add_argument, True
            self.children(node)
            self.in_add_argument = outer
            return
        if target is not None and type(target) is ast.Subscript:
            self._environ_write(self.qualname(target.value), target.slice, node)
        elif target is not None and type(target) is ast.Attribute:
            self._config_path(target.attr, value)
            if type(target.value) is ast.Name and target.value.id == "self":
                self._self_attribute(target.attr, value)
            elif self.args_names:
                self._rewired(target, value)
        self.children(node)
        if name is not None:
            self._remember_local(name, value)

    def _if(self, node: ast.If) -> None:
        self.visit(node.test)
        subs = subnodes(node.test)  # one walk for every question about the test
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
        tested = unwrap_tested(subnodes(node.test))
        self.unwrap_tested.extend(tested)
        self.children(node)
        del self.unwrap_tested[len(self.unwrap_tested) - len(tested) :]

    def _try(self, node: ast.Try) -> None:
        self.in_try += 1  # reads in a try body may be expected to fail
        for child in node.body:
            self.visit(child)
        self.in_try -= 1
        for handler in node.handlers:
            self.visit(handler)
        for child in [*node.orelse, *node.finalbody]:
            self.visit(child)

    def _subscript(self, node: ast.Subscript) -> None:
        self._environ_read(node)
        self.children(node)

    def _while(self, node: ast.While) -> None:
        self.scope.loops_or_syncs = True
        self.children(node)

    def _for(self, node: ast.For | ast.AsyncFor) -> None:
        self.scope.loops_or_syncs = True
        names = [n.id for n in subnodes(node.target) if type(n) is ast.Name]
        if not any("epoch" in n.lower() for n in names):
            steps = any("iter" in n.lower() or "step" in n.lower() for n in names)
            self.step_loops += steps  # a loop over training steps saves checkpoints too
            self.children(node)
            self.step_loops -= steps
            return
        loop = EpochLoop(
            self.span(node),
            node.target.id if type(node.target) is ast.Name else None,
            nested=bool(self.loops),
            scope=self.scope,
            node=node,
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
            params = [a.arg for a in [*args.posonlyargs, *args.args]]
            if function == "__init__" and outer.class_name is not None:
                # Logger("logs") calls Logger.__init__(self, log_dir): one function, by its class
                function, params = outer.class_name, params[1:]
            self.functions[function] = None
            line = node.lineno  # type: ignore[attr-defined]
            self.scope = Scope(
                False,
                rank_guarded=self.guard_kind([function.lower()]) == "global",
                function=function,
                span=Span(line, 0, line, 0),
            )
            self._parameter_defaults(args, self.scope)
            self.function_params[function] = params
            self.keyword_params[function] = [a.arg for a in args.kwonlyargs]
            for child in node.body:  # type: ignore[attr-defined]
                self.visit(child)
        else:
            name = node.name if type(node) is ast.ClassDef else None
            self.scope = Scope(False, class_name=name)
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
            and id(node) not in self.join_tails
            and (not self.scope.is_module or node.lineno > constant.line)
        ):
            constant.uses.append((self.span(node), self.scope, node.lineno))
        if self.npu and node.id in self.aliases:
            self._qualified_use(self.aliases[node.id], node)

    def _attribute(self, node: ast.Attribute) -> None:
        if self.npu:
            self._cuda_attribute(node)
        value = node.value  # an expression: visit() without its statement bookkeeping
        handler = self.handlers.get(type(value))
        if handler is None:
            self.children(value)
        else:
            handler(self, value)

    def _constant(self, node: ast.Constant) -> None:
        value = node.value
        if type(value) is not str or len(value) > 64 or id(node) in self.skip_strings:
            return
        if self.npu:
            self._cuda_string(node, value, device_rule="MA304", nccl_rule="MA301")
        if value.startswith("tcp://") and id(node) not in self.injected_defaults:
            self.tcp_addresses.append(Site(self.span(node), value))
        elif "/" in value and not self.in_display and not self.in_add_argument:
            # "checkpoints/last.pth" anywhere: it moves with a "checkpoints" the script writes
            self.slash_strings.append(
                PathSite(
                    self.span(node), pt.PathUse(value, "output", False), self.scope, node.lineno
                )
            )
            self.slash_ids.append(id(node))

    def _joined_str(self, node: ast.JoinedStr) -> None:
        first = node.values[0] if node.values else None
        if type(first) is ast.Constant and isinstance(first.value, str):
            if self.npu and first.value.startswith("cuda:"):
                self._cuda_fstring(node)
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

    handlers: ClassVar[Mapping[type, Callable[[Any, Any], None]]] = {
        ast.Import: ImportFacts._import,
        ast.ImportFrom: ImportFacts._import_from,
        ast.Call: CallFacts._call,
        ast.Attribute: _attribute,
        ast.Name: _name,
        ast.Constant: _constant,
        ast.JoinedStr: _joined_str,
        ast.Compare: _compare,
        ast.Assign: _assign,
        ast.If: _if,
        ast.IfExp: _if_exp,
        ast.For: _for,
        ast.AsyncFor: _for,
        ast.While: _while,
        ast.Try: _try,
        ast.Return: ArgsFlowFacts._return,
        ast.Subscript: _subscript,
        ast.FunctionDef: _function,
        ast.AsyncFunctionDef: _function,
        ast.ClassDef: _function,
        ast.Lambda: _function,
    }


__all__ = ["FileFacts"]

"""Where the parsed arguments go (MA1xx facts): returned by the function that parses them
(``args, text = _parse_args()``, YOLOv5's ``opt = parse_opt()``), passed to other functions
(``main_worker(gpu, ngpus, args)``, ``mp.spawn(main_worker, args=(ngpus, args))``). A fix may
write ``args.train_url`` wherever the arguments are in scope, under whatever name they have."""

from __future__ import annotations

import ast

from majob.migrate.facts.records import ArgsAlias, ArgsPass, ParseSite
from majob.migrate.facts.walk import TreeWalk

SPAWN = "torch.multiprocessing.spawn"


class ArgsFlowFacts(TreeWalk):
    """Records the functions that return parsed arguments, and where arguments are passed on."""

    def _return(self, node: ast.Return) -> None:
        """``return args`` / ``return args, text`` of the parsed arguments: the function
        returns them (at that tuple index); ``return parser.parse_known_args()[0]`` too."""
        function = self.scope.function
        value = node.value
        if function is not None and value is not None:
            names = [value] if type(value) is not ast.Tuple else value.elts
            for index, item in enumerate(names):
                if type(item) is ast.Name and self._parsed_here(item.id):
                    self.returns_args[function] = index if type(value) is ast.Tuple else None
            if any(p.scope is self.scope and p.args_name is None for p in self.parses):
                self.returns_args.setdefault(function, None)
        self.children(node)

    def _parsed_here(self, name: str) -> bool:
        return any(p.scope is self.scope and p.args_name == name for p in self.parses) or any(
            a.scope is self.scope and a.name == name for a in self.args_aliases
        )

    def _args_assigned(self, target: ast.AST, value: ast.AST, line: int) -> None:
        """``args, text = _parse_args()``: the arguments have a name here from this line on."""
        if type(value) is not ast.Call or type(value.func) is not ast.Name:
            return
        index = self.returns_args.get(value.func.id, -1)
        if index == -1:
            return
        if index is None and type(target) is ast.Name:
            name: str | None = target.id
        elif index is not None and type(target) is ast.Tuple and index < len(target.elts):
            item = target.elts[index]
            name = item.id if type(item) is ast.Name else None
        else:
            name = None
        if name is not None:
            self.args_aliases.append(ArgsAlias(name, self.scope, line, value.func.id))
            self.args_names.add(name)

    def _args_passed(self, node: ast.Call, callee: str, method: bool) -> None:
        """``f(a, args)`` with a name that holds parsed arguments: ``f``'s parameter holds them."""
        for index, arg in enumerate(node.args):
            if type(arg) is ast.Name and arg.id in self.args_names:
                self.args_passes.append(ArgsPass(callee, index, None, method, arg.id, self.scope))
        for keyword in node.keywords:
            value = keyword.value
            if type(value) is ast.Name and value.id in self.args_names and keyword.arg:
                self.args_passes.append(
                    ArgsPass(callee, -1, keyword.arg, method, value.id, self.scope)
                )

    def _spawned(self, node: ast.Call) -> None:
        """``mp.spawn(fn, args=(a, args))`` calls ``fn(rank, a, args)``."""
        target = node.args[0] if node.args else None
        spawned = next((k.value for k in node.keywords if k.arg == "args"), None)
        if type(target) is not ast.Name or type(spawned) is not ast.Tuple:
            return
        for index, arg in enumerate(spawned.elts):
            if type(arg) is ast.Name and arg.id in self.args_names:
                self.args_passes.append(
                    ArgsPass(target.id, index + 1, None, False, arg.id, self.scope)
                )

    def parse_named(self, parse: ParseSite) -> None:
        if parse.args_name:
            self.args_names.add(parse.args_name)

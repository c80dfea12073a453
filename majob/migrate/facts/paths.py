"""The path-use collector of the single pass (MA1xx facts): local path literals in path
positions (``open``, ``torch.save``, ``np.load``, ``Path(...)``, formatted paths), the direction
each use gives them, and what a named path (a constant, a parameter, a flag) is used as."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts.records import CallLiteral, PathSite, Site
from majob.migrate.facts.state import FactsBase


class PathFacts(FactsBase):
    """Records path sites, the kind of the named paths they use, and paths passed to helpers."""

    def _path_arg(
        self,
        node: ast.Call,
        spec: pt.PathArg,
        kind: pt.PathKind,
        neutral: bool = False,
        mkdir: bool = False,
    ) -> None:
        """The path argument of ``node`` (a call that takes one where ``spec`` says), used as
        ``kind``: a literal is a path site; a name passes ``kind`` on to what it names."""
        arg = node.args[spec.index] if 0 <= spec.index < len(node.args) else None
        if arg is None:
            arg = next((k.value for k in node.keywords if k.arg == spec.keyword), None)
        if arg is None or self._named_path_used(arg, kind, neutral):
            return
        found = self._path_literal(arg, kind, spec.is_dir, neutral)
        if found is None:
            return
        literal, text, is_dir = found
        self.skip_strings.add(id(literal))
        exist_ok = any(k.arg == "exist_ok" for k in node.keywords)
        self.paths.append(
            PathSite(
                self.span(literal),
                pt.PathUse(text, kind, is_dir),
                self.scope,
                literal.lineno,
                neutral=neutral,
                mkdir=self.span(node) if mkdir and arg is literal and not exist_ok else None,
            )
        )

    def _named_path_used(self, arg: ast.expr, kind: pt.PathKind, neutral: bool) -> bool:
        """``arg`` (or the first argument of the call it is) names a path constant, a parameter
        or an ``args.<flag>`` with a path default: give that ``kind`` (unless ``neutral``)."""
        head = arg.args[0] if type(arg) is ast.Call and arg.args else arg
        if type(head) is ast.Name and head.id in self.constants:
            constant = self.constants[head.id]
            if not neutral:
                constant.kind = constant.kind or kind
            return True
        if neutral:
            return False
        if type(head) is ast.Name:
            param = self._parameter_of(head.id)
            if param is not None and self.scope.function is not None:
                # def get_outdir(path): os.makedirs(os.path.join(path, ...)): the callers'
                # literals for `path` are paths (see _call_literals).
                self.path_params.setdefault((self.scope.function, param), kind)
        return self._default_used(head, kind)

    def _path_literal(
        self, arg: ast.expr, kind: pt.PathKind, is_dir: bool, neutral: bool
    ) -> tuple[ast.Constant, str, bool] | None:
        """The local path literal ``arg`` is (or joins onto: a directory), its text, and whether
        it is a directory; a write into the input or a formatted path is recorded here instead."""
        literal: ast.AST | None = None
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
        elif (template := self._template(arg)) is not None:
            directory, rest = template
            use = pt.PathUse(directory, kind, True)
            line = getattr(arg, "lineno", 0)
            site = PathSite(self.span(arg), use, self.scope, line, neutral, template_rest=rest)
            self.paths.append(site)
        if type(literal) is not ast.Constant or type(literal.value) is not str:
            return None
        if not pt.is_local_path_literal(literal.value):
            return None
        return literal, literal.value, is_dir

    def _template(self, node: ast.AST) -> tuple[str, str] | None:
        """(directory, the expression without it) for a formatted path whose text starts with a
        directory: ``f"ckpt/e{epoch}.pt"``, ``"ckpt/e%d.pt" % epoch``, ``"ckpt/{}".format(x)``."""
        if type(node) is ast.JoinedStr and node.values and type(node.values[0]) is ast.Constant:
            head = str(node.values[0].value)
        elif (
            type(node) is ast.BinOp
            and type(node.op) is ast.Mod
            and type(node.left) is ast.Constant
            and type(node.left.value) is str
        ):
            head = node.left.value.split("%", 1)[0]
        elif type(node) is ast.BinOp and type(node.op) is ast.Add:
            left: ast.expr = node  # "checkpoints/" + name + ".pt": the leftmost operand
            while type(left) is ast.BinOp and type(left.op) is ast.Add:
                left = left.left
            if type(left) is not ast.Constant or type(left.value) is not str:
                return None
            head = left.value
        elif (
            type(node) is ast.Call
            and type(node.func) is ast.Attribute
            and node.func.attr == "format"
            and type(node.func.value) is ast.Constant
            and type(node.func.value.value) is str
        ):
            head = node.func.value.value.split("{", 1)[0]
        else:
            return None
        directory = head.rsplit("/", 1)[0] if "/" in head else ""
        text = self.segment(node)
        if not directory or text is None or not pt.is_local_path_literal(directory):
            return None
        quote = min((i for i in (text.find("'"), text.find('"')) if i >= 0), default=-1)
        if quote < 0 or not text[quote + 1 :].startswith(directory + "/"):
            return None  # an escape or a triple quote: left to the user
        return directory, text[: quote + 1] + text[quote + 2 + len(directory) :]

    def _pathlib_write(self, receiver: ast.AST) -> None:
        """``Path("x").write_text(...)``, ``(Path("runs") / name).mkdir()``: an output."""
        while type(receiver) is ast.BinOp and type(receiver.op) is ast.Div:
            receiver = receiver.left
        if type(receiver) is ast.Call and self.qualname(receiver.func) in pt.PATHLIB_CALLS:
            self._pathlib_call(receiver, "output")

    def _pathlib_call(self, node: ast.Call, kind: pt.PathKind | None = None) -> None:
        """``Path("runs") / name``: a literal turned into a path is one; its direction, unless a
        write method on it decides it, is guessed from its name (``runs``, ``checkpoints`` are
        outputs) when no other use decides it."""
        arg = node.args[0] if len(node.args) == 1 and not node.keywords else None
        if (
            type(arg) is not ast.Constant
            or type(arg.value) is not str
            or id(arg) in self.skip_strings
            or self.in_display
            or self.in_add_argument
            or arg.value.rstrip("/") in ("", ".", "..")
        ):
            return
        neutral = kind is None and pt.kind_from_name(arg.value) is None
        kind = kind or pt.kind_from_name(arg.value) or "input"
        self._path_arg(node, pt.PathArg(0, "", kind, True), kind, neutral=neutral)

    def _parameter_of(self, name: str) -> str | None:
        """The parameter of the current function that ``name`` is, or was derived from."""
        function = self.scope.function
        if function is None:
            return None
        name = self.derived.get((id(self.scope), name), name)
        return name if name in self.function_params.get(function, ()) else None

    def _derived_path(self, name: str, value: ast.AST) -> None:
        """``outdir = os.path.join(path, *paths)`` (or ``Path(path) / x``): ``outdir`` is
        ``path`` for the parameters that reach a path position."""
        if self.scope.function is None or type(value) not in (ast.Call, ast.BinOp, ast.Name):
            return
        head = value
        while type(head) in (ast.Call, ast.BinOp):
            if type(head) is ast.BinOp:
                head = head.left
            elif type(head) is ast.Call and head.args:
                head = head.args[0]
            else:
                return
        if type(head) is ast.Name:
            param = self._parameter_of(head.id)
            if param is not None:
                self.derived[(id(self.scope), name)] = param

    def _call_literals(self, node: ast.Call) -> None:
        """String literals passed to a local function (also as either branch of ``x if c else
        "./out"``): paths when the parameter they bind reaches a path position."""
        func = node.func
        if type(func) is ast.Name:
            callee, method = func.id, False
        elif type(func) is ast.Attribute and not (
            type(func.value) is ast.Name and func.value.id in self.aliases
        ):
            callee, method = func.attr, True  # obj.f(...), Data().f(...); not np.load(...)
        else:
            return
        for index, arg in enumerate(node.args):
            kind = type(arg)
            if kind is not ast.Constant and kind is not ast.IfExp:
                continue
            for value in (arg.body, arg.orelse) if kind is ast.IfExp else (arg,):  # type: ignore[attr-defined]
                if type(value) is ast.Constant and type(value.value) is str:
                    self.call_literals.append(
                        CallLiteral(callee, index, method, value.value, self.span(value), id(value))
                    )

    def _implicit_dir(self, node: ast.Call, qual: str) -> None:
        """``SummaryWriter()`` with no log_dir writes under ./runs, outside the output channel."""
        if qual in pt.IMPLICIT_DIR_CALLS and not node.args and not node.keywords:
            self.implicit_dirs.append(Site(self.span(node), pt.IMPLICIT_DIR_CALLS[qual]))

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

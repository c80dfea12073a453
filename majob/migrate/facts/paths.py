"""The path-use collector of the single pass (MA1xx facts): local path literals in path
positions (``open``, ``torch.save``, ``np.load``, ``Path(...)``, formatted paths), the direction
each use gives them, and what a named path (a constant, a parameter, a flag) is used as."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts.flow import FlowFacts, named_template, path_root
from majob.migrate.facts.records import CallLiteral, HelperCall, PathSite, Site
from majob.migrate.findings import Span

# Arguments that may be (or format) a path literal.
_LITERAL_LIKE = frozenset({ast.Constant, ast.IfExp, ast.JoinedStr, ast.BinOp, ast.Call})


class PathFacts(FlowFacts):
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
        arg = spec.argument(node)
        if arg is None:
            return
        exist_ok = any(k.arg == "exist_ok" for k in node.keywords)
        call = self.span(node) if mkdir and type(arg) is ast.Constant and not exist_ok else None
        self._path_value(arg, kind, spec.is_dir, neutral, call, 0)

    def _path_value(
        self,
        arg: ast.AST,
        kind: pt.PathKind,
        is_dir: bool,
        neutral: bool,
        mkdir: Span | None,
        hops: int,
    ) -> None:
        """``arg`` in a path position: a literal, a named path, or a local variable followed
        to its value (``PATH = "model.pt"`` ... ``torch.save(m, PATH)``)."""
        if self._named_path_used(arg, kind, neutral):
            return
        found = self._path_literal(arg, kind, is_dir, neutral)
        if found is None:
            followed = self._followed(arg, hops)
            if followed is not None:
                value, joined = followed
                self._path_value(value, kind, is_dir or joined, neutral, None, hops + 1)
            return
        literal, text, is_dir = found
        self.skip_strings.add(id(literal))
        self._add_site(
            PathSite(
                self.span(literal),
                pt.PathUse(text, kind, is_dir),
                self.scope,
                literal.lineno,
                neutral=neutral,
                mkdir=mkdir,
                named=hops > 0,
            )
        )

    def _add_site(self, site: PathSite) -> None:
        """One site per literal, however many uses reach it: a write makes it an output."""
        known = self.site_at.get(site.span)
        if known is None:
            self.site_at[site.span] = site
            self.paths.append(site)
            return
        if site.use.kind == "output" and not site.neutral:
            known.use = pt.PathUse(known.use.value, "output", known.use.is_dir or site.use.is_dir)
        known.neutral = known.neutral and site.neutral
        known.named = known.named or site.named
        known.mkdir = known.mkdir or site.mkdir

    def _named_path_used(self, arg: ast.AST, kind: pt.PathKind, neutral: bool) -> bool:
        """``arg`` is built on a path constant, a parameter, an ``args.<flag>`` or a
        ``self.<attr>`` (``os.path.join(args.data, "train")``): give that ``kind`` (unless
        ``neutral``)."""
        head, _ = path_root(arg)
        if type(head) is ast.Name and head.id in self.constants:
            constant = self.constants[head.id]
            if not neutral and (constant.kind is None or kind == "output"):
                constant.kind = kind  # a path the script writes is an output wherever it is read
            return True
        if neutral:
            return False
        if type(head) is ast.Name:
            param = self._parameter_of(head.id)
            if param is not None and self.scope.function is not None:
                # def get_outdir(path): os.makedirs(os.path.join(path, ...)): the callers'
                # literals for `path` are paths (see _call_literals).
                self._param_used((self.scope.function, param), kind)
        elif type(head) is ast.Attribute:
            self._attribute_used(head, kind)
        return self._default_used(head, kind)

    def _path_literal(
        self, arg: ast.AST, kind: pt.PathKind, is_dir: bool, neutral: bool
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
            self._add_site(site)  # once, however many calls reach it (plt.savefig is two)
        if type(literal) is not ast.Constant or type(literal.value) is not str:
            return None
        if not pt.is_local_path_literal(literal.value) or pt.is_code_file(literal.value):
            return None  # exec(open("configurator.py").read()) reads code, not data
        return literal, literal.value, is_dir or literal.value.endswith("/")

    def _template(self, node: ast.AST) -> tuple[str, str] | None:
        """(directory, the expression without it) for a formatted path: ``f"ckpt/e{epoch}.pt"``,
        ``"ckpt/e%d.pt" % epoch``, ``"ckpt/{}".format(x)``; a name formatted in the working
        directory (``"model_%d.pt" % epoch``) has the directory ``.`` and keeps its whole text."""
        head = self._formatted_head(node)
        if type(node) is ast.BinOp and type(node.op) is ast.Add:
            left: ast.expr = node  # "checkpoints/" + name + ".pt": the leftmost operand
            while type(left) is ast.BinOp and type(left.op) is ast.Add:
                left = left.left
            head = left.value if type(left) is ast.Constant and type(left.value) is str else None
        if head is None:
            return None
        text = self.segment(node)
        directory = head.rsplit("/", 1)[0] if "/" in head else ""
        if text is None or not pt.is_local_path_literal(directory or head):
            return None
        if not directory:
            return ".", text
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

    def _derived_path(self, name: str, value: ast.AST) -> None:
        """``outdir = os.path.join(path, *paths)`` (or ``Path(path) / x``): ``outdir`` is
        ``path`` for the parameters that reach a path position."""
        if self.scope.function is None or type(value) not in (ast.Call, ast.BinOp, ast.Name):
            return
        head = value
        while type(head) in (ast.Call, ast.BinOp):
            if type(head) is ast.BinOp:
                head = head.left
            elif (template := named_template(head)) is not None:
                head = template  # FOLDER.format(tag): tag fills in a name, it is no root
            elif type(head) is ast.Call and head.args:
                head = head.args[0]
            else:
                return
        if type(head) is ast.Name:
            param = self._parameter_of(head.id)
            if param is not None:
                self.derived[(id(self.scope), name)] = param

    def _call_literals(self, node: ast.Call) -> None:
        """String literals (and paths formatted from one) passed to a local function, also as
        either branch of ``x if c else "./out"`` or through a local variable: paths when the
        parameter they bind reaches a path position."""
        func = node.func
        into = self.call_literals
        if type(func) is ast.Name:
            callee, method = func.id, False
            if callee in self.aliases:  # from utils import get_outdir: maybe the project's
                callee, into = self.aliases[callee], self.imported_literals
        elif type(func) is ast.Attribute and not (
            type(func.value) is ast.Name and func.value.id in self.aliases
        ):
            callee, method = func.attr, True  # obj.f(...), Data().f(...); not np.load(...)
        elif (qual := self.qualname(func)) is not None:
            callee, method, into = qual, False, self.imported_literals  # utils.get_outdir(...)
        else:
            return
        if into is self.call_literals and callee not in self.defined_names:
            return  # not a function of this file: its parameters are unknown
        if self.args_names and into is self.call_literals:
            self._args_passed(node, callee, method)
        if callee in self.default_functions:
            passed = frozenset(k.arg for k in node.keywords if k.arg)
            call = HelperCall(
                *(callee, self.span(node), passed, len(node.args), method, self.scope),
                node.lineno,
            )
            self.helper_calls.append(call)
        locals_here = self.local_values
        scope_id = id(self.scope)
        for index, arg in enumerate(node.args):
            kind = type(arg)
            # a name counts only as a local variable with a value (the common case is not)
            if kind in _LITERAL_LIKE or (
                kind is ast.Name and (scope_id, arg.id) in locals_here  # type: ignore[attr-defined]
            ):
                self._call_literal(callee, method, index, None, arg, into)
        for keyword in node.keywords:
            value = keyword.value
            kind = type(value)
            if keyword.arg is not None and (
                kind in _LITERAL_LIKE or (kind is ast.Name and (scope_id, value.id) in locals_here)  # type: ignore[attr-defined]
            ):
                self._call_literal(callee, method, -1, keyword.arg, value, into)

    def _call_literal(
        self,
        callee: str,
        method: bool,
        index: int,
        keyword: str | None,
        arg: ast.expr,
        into: list[CallLiteral],
    ) -> None:
        kind = type(arg)
        if kind is ast.Name:
            value = self._local_value(arg)
            if value is None:
                return
            arg, kind = value, type(value)
        values = (arg.body, arg.orelse) if kind is ast.IfExp else (arg,)  # type: ignore[attr-defined]
        for value in values:
            text = value.value if type(value) is ast.Constant else None
            if type(text) is not str:
                text = self._formatted_head(value)
            if text is not None:
                template = self._template(value) if type(value) is not ast.Constant else None
                into.append(
                    CallLiteral(
                        *(callee, index, keyword, method, text, self.span(value), id(value)),
                        scope=self.scope,
                        line=getattr(value, "lineno", 0),
                        directory=template[0] if template else "",
                        rest=template[1] if template else None,
                    )
                )

    def _formatted_head(self, node: ast.AST) -> str | None:
        """The literal text a formatted path starts with (``"ckpt_{:04d}.pt".format(e)``,
        ``f"epoch_{e}.pt"``, ``"e%d.pt" % e``, ``f"ckpt/e%d.pt" % e``), when it starts with text."""
        kind = type(node)
        if kind is ast.JoinedStr and node.values and type(node.values[0]) is ast.Constant:  # type: ignore[attr-defined]
            return str(node.values[0].value)  # type: ignore[attr-defined]
        if kind is ast.BinOp and type(node.op) is ast.Mod:  # type: ignore[attr-defined]
            text = _plain_text(node.left)  # type: ignore[attr-defined]
            return text.split("%", 1)[0] or None if text is not None else None
        if (
            kind is ast.Call
            and type(node.func) is ast.Attribute  # type: ignore[attr-defined]
            and node.func.attr == "format"  # type: ignore[attr-defined]
        ):
            text = _plain_text(node.func.value)  # type: ignore[attr-defined]
            return text.split("{", 1)[0] or None if text is not None else None
        return None

    def _implicit_dir(self, node: ast.Call, qual: str) -> None:
        """``SummaryWriter()`` with no log_dir writes under ./runs, outside the output channel."""
        if qual in pt.IMPLICIT_DIR_CALLS and not node.args and not node.keywords:
            site = Site(self.span(node), pt.IMPLICIT_DIR_CALLS[qual], self.scope)
            self.implicit_dirs.append(site)

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
                if default.kind is None or kind == "output":
                    default.kind = kind
                found = True
        return found


def _plain_text(node: ast.AST) -> str | None:
    """A string literal's text; an f-string without fields (``f"ckpt/e%d.pt"``) is one too."""
    if type(node) is ast.Constant and type(node.value) is str:
        return node.value
    if type(node) is ast.JoinedStr and all(type(v) is ast.Constant for v in node.values):
        return "".join(str(v.value) for v in node.values)  # type: ignore[attr-defined]
    return None

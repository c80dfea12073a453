"""The path collector of the single pass (MA1xx facts): path literals in path positions, the
defaults and module constants that hold paths, argument parsers and their flags."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts_base import (
    CallLiteral,
    DefaultPath,
    FactsBase,
    ParseSite,
    PathConstant,
    PathSite,
    Scope,
    Site,
)


class PathFacts(FactsBase):
    """Records path literals, path defaults and constants, parse sites and flags."""

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
            self.injected_defaults.add(id(default))
        built = pathlib_literal(default)  # default=ROOT / "runs/train": a path by construction
        default = built or default
        if (
            dest
            and dest not in pt.CHANNEL_FLAGS.values()
            and type(default) is ast.Constant
            and type(default.value) is str
            and pt.is_local_path_literal(default.value)
            and (
                built is not None
                or pt.path_argument_name(dest)
                or pt.looks_like_data_file(default.value)
            )
        ):
            self.skip_strings.add(id(default))
            self.defaults.append(
                DefaultPath(dest, self.span(default), default.value, "argument", None)
            )
        options = [
            a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str)
        ]
        for arg in node.args:
            if (
                type(arg) is ast.Constant
                and isinstance(arg.value, str)
                and arg.value.startswith("--")
            ):
                exact = "--" + arg.value[2:].replace("-", "_")
                if exact != arg.value and exact[2:] in pt.PLATFORM_FLAGS and exact not in options:
                    # ModelArts passes --world_size; argparse does not match it to --world-size.
                    declared = self.segment(arg) or repr(arg.value)
                    self.flag_spellings.append((Site(self.span(arg), exact), declared))
                flag = arg.value[2:].replace("-", "_")
                literal = (
                    default.value
                    if type(default) is ast.Constant and isinstance(default.value, str)
                    else None
                )
                self.flags[flag] = literal

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
        if not neutral and type(head) is ast.Name:
            param = self._parameter_of(head.id)
            if param is not None and self.scope.function is not None:
                # def get_outdir(path): os.makedirs(os.path.join(path, ...)): the callers'
                # literals for `path` are paths (see _call_literals).
                self.path_params.setdefault((self.scope.function, param), kind)
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
        elif (template := self._template(arg)) is not None:
            directory, rest = template
            use = pt.PathUse(directory, kind, True)
            line = getattr(arg, "lineno", 0)
            site = PathSite(self.span(arg), use, self.scope, line, neutral, template_rest=rest)
            self.paths.append(site)
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

    def _config_path(self, name: str, value: ast.AST) -> None:
        """``cfg.OUTPUT_DIR = "./output"`` or ``SimpleNamespace(ROOT="datasets/coco")``: a path
        in a config object, edited where it is set (its uses read ``cfg.OUTPUT_DIR``)."""
        if (
            type(value) is not ast.Constant
            or type(value.value) is not str
            or id(value) in self.skip_strings
            or not pt.config_path_name(name)
            or not pt.is_local_path_literal(value.value)
            or any(c in value.value for c in "^$*?[]\\(")  # a pattern (a route, a regex)
        ):
            return
        self.skip_strings.add(id(value))
        self.defaults.append(DefaultPath(name, self.span(value), value.value, "config", None))

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
            # NAME = Path("x") only: in Path("x") / "y" the Path call is the path site itself
            wrapped = pathlib_literal(value) if type(value) is ast.Call else None
            if wrapped is not None and pt.is_local_path_literal(str(wrapped.value)):
                # CKPT_DIR = Path("checkpoints"): reported at the literal; its uses keep a Path,
                # so they are not rewritten to the (str) channel argument.
                self.skip_strings.add(id(wrapped))
                base = str(wrapped.value).rstrip("/").rsplit("/", 1)[-1]
                self.constants[name] = PathConstant(
                    name,
                    stmt.end_lineno or stmt.lineno,
                    None,
                    base,
                    is_file=pt.looks_like_file(base),
                    kind=None,
                    literal_span=self.span(wrapped),
                    routable=False,
                )
                continue
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


def pathlib_literal(node: ast.AST | None) -> ast.Constant | None:
    """The string literal in ``Path("runs")`` or ``ROOT / "runs/train"``, else None."""
    if (
        type(node) is ast.Call
        and len(node.args) == 1
        and not node.keywords
        and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("Path", "PurePath")
        and type(node.args[0]) is ast.Constant
        and type(node.args[0].value) is str
    ):
        return node.args[0]
    if (
        type(node) is ast.BinOp
        and type(node.op) is ast.Div
        and type(node.right) is ast.Constant
        and type(node.right.value) is str
        and type(node.left) in (ast.Name, ast.Attribute, ast.Call)
    ):
        return node.right
    return None

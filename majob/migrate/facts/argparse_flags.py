"""The argument-parser collector of the single pass: the flags a script declares (with their
defaults, path defaults among them), and where ``parse_args`` puts the parsed arguments; fixes
read ``args.<flag>`` through them, and ModelArts passes its own flags to them."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts.named_paths import pathlib_literal
from majob.migrate.facts.records import DefaultPath, ParseArgsCall, ParseSite, Scope, Site
from majob.migrate.facts.state import FactsBase

PARSE_METHODS = ("parse_args", "parse_known_args")


class ArgparseFacts(FactsBase):
    """Records ``add_argument`` flags and defaults, and ``parse_args`` sites."""

    def _add_argument(self, node: ast.Call) -> None:
        default = next((k.value for k in node.keywords if k.arg == "default"), None)
        options = [
            a.value for a in node.args if type(a) is ast.Constant and isinstance(a.value, str)
        ]
        given = next((k.value for k in node.keywords if k.arg == "dest"), None)
        named_dest = given.value if type(given) is ast.Constant else None
        dest = pt.argument_dest(options, named_dest if isinstance(named_dest, str) else None)
        self._rendezvous_default(node, options, dest, default)
        built = pathlib_literal(default)  # default=ROOT / "runs/train": a path by construction
        default = built or default
        if dest and type(default) is ast.Constant and type(default.value) is str:
            self._path_default(node, dest, default, built is not None)
        self._declared_flags(node, options, default)
        for option in options:  # --dist-url, --init_method: args.dist_url holds both
            if dest and option.startswith("--"):
                self.flag_dests[option[2:].replace("-", "_")] = dest

    def _rendezvous_default(
        self, node: ast.Call, options: list[str], dest: str | None, default: ast.AST | None
    ) -> None:
        spellings = {o.lstrip("-").replace("-", "_") for o in options}
        if default is not None and (dest in pt.INJECTED_DIST_FLAGS or "init_method" in spellings):
            # --init_method's default is replaced by what ModelArts passes on a cluster.
            self.injected_defaults.add(id(default))
        elif (
            type(default) is ast.Constant
            and isinstance(default.value, str)
            and default.value.startswith("tcp://")
            and node.args
        ):
            # --dist-url "tcp://10.1.1.1:23456": the --init_method spelling lets the platform's
            # rendezvous reach it
            first = node.args[0]
            declared = self.segment(first)
            if declared is not None:
                self.tcp_flags[self.span(default)] = (self.span(first), declared)

    def _path_default(self, node: ast.Call, dest: str, default: ast.Constant, built: bool) -> None:
        """A flag's string default: a path by its name, value or construction, or a candidate
        whose uses decide (``--outf "."``). A name among ``choices`` is none."""
        value = str(default.value)
        if any(k.arg == "choices" for k in node.keywords) or not pt.is_local_path_literal(value):
            return
        path = DefaultPath(dest, self.span(default), value, "argument", None, None)
        path.plain = _holds_one_str(node)
        if dest in pt.CHANNEL_FLAGS.values():
            return
        if built or pt.path_argument_name(dest) or pt.looks_like_data_file(value):
            self.skip_strings.add(id(default))
            self.defaults.append(path)
        elif dest not in pt.PLATFORM_FLAGS:
            self.flag_candidates[dest] = path  # a path only if its uses say so (see flow)

    def _rewired(self, target: ast.Attribute, value: ast.AST) -> None:
        """``args.data = args.data_url``: the flag was moved to its channel after parsing."""
        named = type(target.value) is ast.Name and target.value.id in self.args_names
        if named and any(w in pt.CHANNEL_FLAGS.values() for w in self.words(value)):
            self.rewired.add(target.attr)

    def _declared_flags(self, node: ast.Call, options: list[str], default: ast.AST | None) -> None:
        """Each ``--flag`` of the call, with its default's text; and a ``--world-size`` spelling
        that the ``--world_size`` ModelArts passes would not match."""
        literal = (
            default.value
            if type(default) is ast.Constant and isinstance(default.value, str)
            else None
        )
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
                self.flags[arg.value[2:].replace("-", "_")] = literal

    def _parse_assigned(self, node: ast.Assign, call: ast.AST, target: ast.AST | None) -> None:
        """``args = parser.parse_args()`` (``args, _ = parser.parse_known_args()`` too)."""
        if (
            type(call) is not ast.Call
            or type(call.func) is not ast.Attribute
            or call.func.attr not in PARSE_METHODS
        ):
            return
        args_name = target.id if type(target) is ast.Name else None
        if type(target) is ast.Tuple and target.elts and type(target.elts[0]) is ast.Name:
            args_name = target.elts[0].id
        receiver = call.func.value
        parse = ParseSite(
            self.scope,
            node.end_lineno or node.lineno,
            self.span(node),
            args_name,
            receiver.id if type(receiver) is ast.Name else None,
        )
        self.parses.append(parse)
        if args_name:
            self.args_names.add(args_name)

    def _parse_call(self, node: ast.Call, func: ast.Attribute) -> None:
        """A ``parse_args()``/``parse_known_args()`` call, wherever it stands."""
        stmt = self.stmt
        if type(stmt) is not ast.Assign and stmt:
            # `return parser.parse_known_args()[0]` (YOLOv5's parse_opt): the parser is known,
            # the parsed arguments have no name here.
            receiver = func.value
            parser = receiver.id if type(receiver) is ast.Name else None
            end = stmt.end_lineno or stmt.lineno
            self.parses.append(ParseSite(self.scope, end, self.span(stmt), None, parser))
        if func.attr == "parse_args":
            whole = (
                type(stmt) is ast.Assign
                and stmt.value is node
                and len(stmt.targets) == 1
                and type(stmt.targets[0]) is ast.Name
            )
            name = func.value.id if type(func.value) is ast.Name else None
            self.parse_args_calls.append(ParseArgsCall(self.span(node), whole, name))

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


def _holds_one_str(node: ast.Call) -> bool:
    """``add_argument`` keeps the default as given: no ``type=`` but str, no list of values."""
    for keyword in node.keywords:
        value = keyword.value
        if keyword.arg == "type" and not (type(value) is ast.Name and value.id == "str"):
            return False
        if keyword.arg == "nargs" and not (type(value) is ast.Constant and value.value == "?"):
            return False
        if keyword.arg == "action" and not (type(value) is ast.Constant and value.value == "store"):
            return False
    return True

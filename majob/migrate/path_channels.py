"""Where the channel arguments (``--data_url``, ``--train_url``) live in a script, for the fixes
that read them: the parser whose result the script uses (timm has a config parser before the real
one: the parser with the most arguments is the one), and every place the parsed arguments are in
scope, under their name there: the function that parses them, its callers when it returns them
(``args, text = _parse_args()``), the functions they are passed to (``main_worker(gpu, n, args)``,
``mp.spawn(main_worker, args=(n, args))``), or everywhere when they are parsed at module level."""

from __future__ import annotations

from dataclasses import dataclass, field

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.facts.records import ParseSite, Scope

_ROUNDS = 4  # functions passing the arguments on, followed this deep


def py_str(value: str) -> str:
    """``value`` as a double-quoted Python literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def host_parse(facts: FileFacts) -> ParseSite | None:
    """The parse whose result the script uses: of the parser with the most ``add_argument``
    calls, the first that names its result (else its first)."""
    named = [p for p in facts.parses if p.parser_name]
    if not named:
        return None
    sizes = facts.parser_sizes
    parser = max(named, key=lambda p: sizes.get(p.parser_name or "", 0)).parser_name
    mine = [p for p in named if p.parser_name == parser]
    return next((p for p in mine if p.args_name), mine[0])


@dataclass
class Channels:
    """The parsed arguments' names in each scope, and the expressions fixes write with them."""

    facts: FileFacts
    host: ParseSite | None
    # function -> the parameter that holds the parsed arguments in it
    in_functions: dict[str, str] = field(default_factory=dict)
    needs_os: bool = False

    @classmethod
    def of(cls, facts: FileFacts) -> Channels:
        channels = cls(facts, host_parse(facts))
        channels._follow_passes()
        return channels

    @property
    def os_name(self) -> str:
        return self.facts.binding("os") or "os"

    def args_at(self, scope: Scope, line: int) -> str | None:
        """The name of the parsed arguments at ``line`` of ``scope``, if they are in scope; ""
        for a configurator's globals (``train_url``), after the configurator ran."""
        host = self.host
        config = self.facts.configurator
        if host is None and config is not None:
            return "" if not scope.is_module or line > config.span.end_line else None
        if host is None:
            return None
        for parse in self.facts.parses:
            same = parse.parser_name == host.parser_name and parse.args_name
            if same and self.facts.visible(parse, scope, line):
                return parse.args_name
        for alias in self.facts.args_aliases:
            seen = not scope.is_module or line > alias.line
            if (alias.scope is scope and line > alias.line) or (alias.scope.is_module and seen):
                return alias.name
        if scope.function is not None:
            return self.in_functions.get(scope.function)
        return None

    def _follow_passes(self) -> None:
        facts = self.facts
        for _ in range(_ROUNDS):
            grew = False
            for passed in facts.args_passes:
                if passed.callee in self.in_functions or passed.callee not in facts.functions:
                    continue
                if self.args_at(passed.scope, 1 << 30) != passed.name:
                    continue
                params = facts.function_params.get(passed.callee, [])
                shift = 1 if passed.method and params[:1] in (["self"], ["cls"]) else 0
                if passed.keyword is not None:
                    param: str | None = passed.keyword
                else:
                    index = passed.position + shift
                    param = params[index] if index < len(params) else None
                if param is not None:
                    self.in_functions[passed.callee] = param
                    grew = True
            if not grew:
                return

    def expr(self, args: str, kind: pt.PathKind, rel: str, slash: bool = False) -> str:
        """``args.train_url``, or ``os.path.join(args.train_url, "rel")``; with ``slash`` (the
        old path ended with "/", and ``out + "model.pt"`` may rely on it) a trailing ``""``
        keeps the separator: ``os.path.join(args.train_url, "")``."""
        expr = f"{args}.{pt.CHANNEL_FLAGS[kind]}" if args else pt.CHANNEL_FLAGS[kind]
        parts = [expr, *([py_str(rel)] if rel else []), *(['""'] if slash else [])]
        if len(parts) == 1:
            return expr
        self.needs_os = self.needs_os or self.facts.binding("os") is None
        return f"{self.os_name}.path.join({', '.join(parts)})"

    def joined(self, args: str, kind: pt.PathKind, rel: str, rest: str) -> str:
        """``os.path.join(args.train_url, "rel", <rest>)`` for a formatted path."""
        self.needs_os = self.needs_os or self.facts.binding("os") is None
        channel = f"{args}.{pt.CHANNEL_FLAGS[kind]}" if args else pt.CHANNEL_FLAGS[kind]
        parts = [channel, *([py_str(rel)] if rel else []), rest]
        return f"{self.os_name}.path.join({', '.join(parts)})"

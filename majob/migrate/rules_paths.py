"""Cloud paths (MA101-MA105): hard-coded local paths become the ModelArts channel arguments.

ModelArts downloads the input channel to the directory it passes as ``--data_url`` and uploads
only the ``--train_url`` directory, so a path under the old data or output root is rewritten to
the same place under the channel's argument, and the argument is added to the parser (defaulting
to the old root) when it is missing. Every use of one literal moves together: a directory that is
created for the outputs is an output also where it is only tested or read back (resume).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.facts.records import CallLiteral, ParseSite, PathConstant, PathSite
from majob.migrate.findings import FileFindings, Fix
from majob.migrate.rules import Codemod

_RULE_OF_KIND: dict[pt.PathKind, str] = {"input": "MA101", "output": "MA102"}


def _py_str(value: str) -> str:
    """``value`` as a double-quoted Python literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


@dataclass
class _Plan:
    """What the path rules share: the entry parse, the channel roots, the constants by kind."""

    facts: FileFacts
    parse: ParseSite | None
    roots: dict[str, str | None] = field(default_factory=dict)
    default_code: dict[str, str] = field(default_factory=dict)
    constants: dict[pt.PathKind, list[PathConstant]] = field(default_factory=dict)
    needs_os: bool = False

    @property
    def os_name(self) -> str:
        return self.facts.binding("os") or "os"

    def channel_expr(self, kind: pt.PathKind, rel: str) -> str:
        assert self.parse is not None
        expr = f"{self.parse.args_name}.{pt.CHANNEL_FLAGS[kind]}"
        if not rel:
            return expr
        self.needs_os = self.needs_os or self.facts.binding("os") is None
        return f"{self.os_name}.path.join({expr}, {_py_str(rel)})"


def check_cloud_paths(facts: FileFacts, out: FileFindings) -> None:
    """MA101-MA105: hard-coded local paths and the channel arguments that replace them."""
    plan = _Plan(facts, facts.entry_parse())
    _ma104_parse_args(facts, out)
    _ma105_writes_into_input(facts, out)
    _ma106_flag_spellings(facts, out)
    _ma107_rejected_arguments(facts, out)
    _settle_directions(facts.paths)
    _plan_roots(plan)
    _ma101_ma102_literals(plan, out)
    _ma101_ma102_constants(plan, out)
    _ma101_ma102_defaults(facts, out)
    _ma103_channel_arguments(plan, out)
    if plan.needs_os:
        out.fixes.append(facts.import_fix(Codemod.CLOUD_PATHS, "MA101", "import os\n"))


def _ma104_parse_args(facts: FileFacts, out: FileFindings) -> None:
    for call in facts.parse_args_calls:
        name = "tuple" if call.whole else "index"
        fix = Fix(Codemod.CLOUD_PATHS, "MA104", "parse-known-args", call.span, name=name)
        out.report("MA104", call.span, "", fix)


def _ma105_writes_into_input(facts: FileFacts, out: FileFindings) -> None:
    for write in facts.writes_into_input:
        out.report("MA105", write.span, write.detail)


def _ma106_flag_spellings(facts: FileFacts, out: FileFindings) -> None:
    """``add_argument("--world-size")``: the spelling the platform passes is added beside it."""
    for site, declared in facts.flag_spellings:
        code = f"{declared}, {_py_str(site.detail)}"
        fix = Fix(Codemod.CLOUD_PATHS, "MA106", "replace-expr", site.span, code=code)
        out.report("MA106", site.span, f"ModelArts passes {site.detail}", fix)


def _settle_directions(sites: list[PathSite]) -> None:
    """One direction per literal: a path that is, or lies under, a directory the script writes
    (or a file it writes) is an output wherever it appears (``isdir``, ``torch.load`` on resume).
    Existence tests and copy sources with no writer take the input side."""
    written: set[str] = set()
    for site in sites:
        if site.use.kind == "output" and not site.neutral:
            path = posixpath.normpath(site.use.value)
            written.add(path)
            parent = path if site.use.is_dir else posixpath.dirname(path)
            if parent not in ("", "."):
                written.add(parent)
    for site in sites:
        path = posixpath.normpath(site.use.value)
        under = any(path == w or path.startswith(w.rstrip("/") + "/") for w in written)
        over = site.neutral and any(w.startswith(path.rstrip("/") + "/") for w in written)
        if site.use.kind != "output" and (under or over):
            site.use = pt.PathUse(site.use.value, "output", site.use.is_dir or over)


def _plan_roots(plan: _Plan) -> None:
    facts = plan.facts
    plan.constants = {"input": [], "output": []}
    for constant in facts.constants.values():
        kind = constant.kind or pt.kind_from_name(constant.name)
        if constant.uses and kind and (constant.kind or pt.path_constant_name(constant.name)):
            constant.kind = kind
            plan.constants[kind].append(constant)
    for kind, flag in pt.CHANNEL_FLAGS.items():
        uses = [p.use for p in facts.paths if p.use.kind == kind]
        routable = [c for c in plan.constants[kind] if c.routable]
        if flag in facts.flags:
            declared = facts.flags[flag]
            plan.roots[kind] = pt.channel_root(uses, declared) if declared is not None else None
        elif len(routable) == 1 and len(plan.constants[kind]) == 1 and not uses:
            plan.roots[kind] = None  # the constant is the root (its uses are routed below)
            constant = routable[0]
            plan.default_code[kind] = (
                f"{plan.os_name}.path.dirname({constant.name})"
                if constant.is_file
                else constant.name
            )
        else:
            plan.roots[kind] = pt.channel_root(uses) or pt.DEFAULT_ROOTS[kind]


def _ma101_ma102_literals(plan: _Plan, out: FileFindings) -> None:
    """Path literals in path positions, rewritten under the channel's argument; the uses of one
    literal are rewritten all together or not at all."""
    facts, parse = plan.facts, plan.parse
    planned: list[tuple[PathSite, str, list[Fix]]] = []
    blocked: set[str] = set()
    for site in facts.paths:
        kind = site.use.kind
        rule = _RULE_OF_KIND[kind]
        root = plan.roots[kind]
        rel = pt.relative_to_root(site.use.value, root) if root else None
        fixes: list[Fix] = []
        detail = repr(site.use.value)
        if parse is not None and rel is not None and facts.visible(parse, site.scope, site.line):
            expr = plan.channel_expr(kind, rel)
            if site.template_rest is not None:
                # f"ckpt/e{epoch}.pt" -> os.path.join(args.train_url, "ckpt", f"e{epoch}.pt")
                plan.needs_os = plan.needs_os or facts.binding("os") is None
                parts = [f"{parse.args_name}.{pt.CHANNEL_FLAGS[kind]}"]
                parts += [_py_str(rel)] if rel else []
                code = f"{plan.os_name}.path.join({', '.join([*parts, site.template_rest])})"
                fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", site.span, code=code))
            elif site.mkdir is not None:
                # On ModelArts the output directory exists already: os.mkdir would raise.
                code = f"{plan.os_name}.makedirs({expr}, exist_ok=True)"
                fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", site.mkdir, code=code))
            else:
                fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", site.span, code=expr))
            if rel and kind == "input":
                # Say where the data must then be: a level under --data_url is not implied.
                detail += f" (the {pt.CHANNEL_FLAGS[kind]} directory must then hold {rel!r})"
        else:
            blocked.add(posixpath.normpath(site.use.value))
        planned.append((site, detail, fixes))
    for site, detail, fixes in planned:
        if posixpath.normpath(site.use.value) in blocked:
            fixes = []
        out.report(_RULE_OF_KIND[site.use.kind], site.span, detail, *fixes)


def _ma101_ma102_constants(plan: _Plan, out: FileFindings) -> None:
    """Module constants used as paths: reported at the literal, fixed at their uses."""
    facts, parse = plan.facts, plan.parse
    for group_kind, group in plan.constants.items():
        rule = _RULE_OF_KIND[group_kind]
        routed = group_kind in plan.default_code
        for constant in group:
            shown = repr(constant.value) if constant.value is not None else "a joined path"
            fixes: list[Fix] = []
            root = plan.roots[group_kind]
            rel: str | None = None
            if routed:
                rel = constant.base_name if constant.is_file else ""
            elif constant.value is not None and constant.routable and root:
                # OUTPUT_DIR = "./output" beside "./output/train.log": both move to --train_url.
                rel = pt.relative_to_root(constant.value, root)
            for span, scope, line in constant.uses:
                if rel is not None and parse is not None and facts.visible(parse, scope, line):
                    expr = plan.channel_expr(group_kind, rel)
                    fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", span, code=expr))
            if len(fixes) != len(constant.uses):
                fixes = []  # every use moves, or none does
            out.report(rule, constant.literal_span, f"{constant.name} = {shown}", *fixes)


def _ma101_ma102_defaults(facts: FileFacts, out: FileFindings) -> None:
    """Path literals that are parameter or argparse defaults: fixed by hand where they are."""
    for default in facts.defaults:
        kind = default.kind or pt.kind_from_name(default.name) or pt.kind_from_name(default.value)
        if kind is None:
            kind = "output" if pt.looks_like_data_file(default.value) else "input"
        what = "--" + default.name if default.origin == "argument" else default.name
        verb = "is set to" if default.origin == "config" else "defaults to"
        out.report(_RULE_OF_KIND[kind], default.span, f"{what} {verb} {default.value!r}")
    for literal in facts.call_literals:
        param = _bound_parameter(facts, literal)
        kind = facts.path_params.get((literal.callee, param)) if param else None
        if (
            kind is None
            or literal.node_id in facts.skip_strings
            or not pt.is_local_path_literal(literal.value)
            or pt.is_code_file(literal.value)
        ):
            continue
        detail = f"{literal.value!r} is {literal.callee}()'s {param}, used as a path"
        out.report(_RULE_OF_KIND[kind], literal.span, detail)
    for site in facts.implicit_dirs:
        out.report("MA102", site.span, f"with no log_dir it writes under {site.detail}")
    if not facts.lightning_root_set:
        for site in facts.lightning_dirs:
            detail = f"this {site.detail} writes under the working directory (./lightning_logs)"
            out.report("MA102", site.span, detail)


def _ma107_rejected_arguments(facts: FileFacts, out: FileFindings) -> None:
    for site in facts.rejects_arguments:
        out.report("MA107", site.span, site.detail)


def _bound_parameter(facts: FileFacts, literal: CallLiteral) -> str | None:
    """The parameter of the local function that a passed literal binds."""
    if literal.keyword is not None:
        known = [
            *facts.function_params.get(literal.callee, []),
            *facts.keyword_params.get(literal.callee, []),
        ]
        return literal.keyword if literal.keyword in known else None
    params = facts.function_params.get(literal.callee, [])
    shift = 1 if literal.method and params[:1] in (["self"], ["cls"]) else 0
    index = literal.index + shift
    return params[index] if index < len(params) else None


def _ma103_channel_arguments(plan: _Plan, out: FileFindings) -> None:
    facts = plan.facts
    first = facts.parses[0] if facts.parses else None
    for kind, flag in pt.CHANNEL_FLAGS.items():
        if first is None or flag in facts.flags:
            continue
        fixes = []
        if first.parser_name:
            if kind in plan.default_code:
                default = plan.default_code[kind]
                plan.needs_os = plan.needs_os or (
                    "path.dirname" in default and not facts.binding("os")
                )
            else:
                default = _py_str(plan.roots[kind] or pt.DEFAULT_ROOTS[kind])
            help_text = f"ModelArts passes the {flag} channel's local directory here"
            code = (
                f'{first.parser_name}.add_argument("--{flag}", type=str, '
                f"default={default}, help={_py_str(help_text)})\n"
            )
            fixes.append(Fix(Codemod.CLOUD_PATHS, "MA103", "insert-before", first.stmt, code=code))
        out.report("MA103", first.stmt, f"--{flag}", *fixes)

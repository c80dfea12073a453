"""Cloud paths (MA101-MA105): hard-coded local paths become the ModelArts channel arguments.

ModelArts downloads the input channel to the directory it passes as ``--data_url`` and uploads
only the ``--train_url`` directory, so a path under the old data or output root is rewritten to
the same place under the channel's argument, and the argument is added to the parser (defaulting
to the old root) when it is missing.
"""

from __future__ import annotations

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts, PathConstant
from majob.migrate.findings import FileFindings, Fix
from majob.migrate.rules import Codemod

_RULE_OF_KIND: dict[pt.PathKind, str] = {"input": "MA101", "output": "MA102"}


def _py_str(value: str) -> str:
    """``value`` as a double-quoted Python literal."""
    return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'


def check_cloud_paths(facts: FileFacts, out: FileFindings) -> None:
    """MA101-MA105: hard-coded local paths and the channel arguments that replace them."""
    for call in facts.parse_args_calls:
        name = "tuple" if call.whole else "index"
        fix = Fix(Codemod.CLOUD_PATHS, "MA104", "parse-known-args", call.span, name=name)
        out.report("MA104", call.span, "", fix)
    for write in facts.writes_into_input:
        out.report("MA105", write.span, write.detail)
    parse = facts.entry_parse()
    roots: dict[str, str | None] = {}
    default_code: dict[str, str] = {}
    constants: dict[pt.PathKind, list[PathConstant]] = {"input": [], "output": []}
    for constant in facts.constants.values():
        kind = constant.kind or pt.kind_from_name(constant.name)
        if constant.uses and kind and (constant.kind or pt.path_constant_name(constant.name)):
            constant.kind = kind
            constants[kind].append(constant)
    for kind, flag in pt.CHANNEL_FLAGS.items():
        uses = [p.use for p in facts.paths if p.use.kind == kind]
        if flag in facts.flags:
            declared = facts.flags[flag]
            roots[kind] = pt.channel_root(uses, declared) if declared is not None else None
        elif len(constants[kind]) == 1 and not uses:
            roots[kind] = None  # the constant is the root (its uses are routed below)
            constant = constants[kind][0]
            os_name = facts.binding("os") or "os"
            default_code[kind] = (
                f"{os_name}.path.dirname({constant.name})" if constant.is_file else constant.name
            )
        else:
            roots[kind] = pt.channel_root(uses) or pt.DEFAULT_ROOTS[kind]
    needs_os = False
    for site in facts.paths:
        kind = site.use.kind
        rule = _RULE_OF_KIND[kind]
        root = roots[kind]
        rel = pt.relative_to_root(site.use.value, root) if root else None
        fixes: list[Fix] = []
        if parse is not None and rel is not None and facts.visible(parse, site.scope, site.line):
            expr = f"{parse.args_name}.{pt.CHANNEL_FLAGS[kind]}"
            if rel:
                needs_os = needs_os or facts.binding("os") is None
                expr = f"{facts.binding('os') or 'os'}.path.join({expr}, {_py_str(rel)})"
            fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", site.span, code=expr))
        out.report(rule, site.span, repr(site.use.value), *fixes)
    for group_kind, group in constants.items():
        rule = _RULE_OF_KIND[group_kind]
        routed = group_kind in default_code
        for constant in group:
            shown = repr(constant.value) if constant.value is not None else "a joined path"
            for span, scope, line in constant.uses:
                fixes = []
                if routed and parse is not None and facts.visible(parse, scope, line):
                    expr = f"{parse.args_name}.{pt.CHANNEL_FLAGS[group_kind]}"
                    if constant.is_file:
                        needs_os = needs_os or facts.binding("os") is None
                        base = _py_str(constant.base_name)
                        expr = f"{facts.binding('os') or 'os'}.path.join({expr}, {base})"
                    fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", span, code=expr))
                out.report(rule, span, f"{constant.name} = {shown}", *fixes)
    first = facts.parses[0] if facts.parses else None
    for kind, flag in pt.CHANNEL_FLAGS.items():
        if first is None or flag in facts.flags:
            continue
        fixes = []
        if first.parser_name:
            if kind in default_code:
                default = default_code[kind]
                needs_os = needs_os or ("path.dirname" in default and not facts.binding("os"))
            else:
                default = _py_str(roots[kind] or pt.DEFAULT_ROOTS[kind])
            help_text = f"ModelArts passes the {flag} channel's local directory here"
            code = (
                f'{first.parser_name}.add_argument("--{flag}", type=str, '
                f"default={default}, help={_py_str(help_text)})\n"
            )
            fixes.append(Fix(Codemod.CLOUD_PATHS, "MA103", "insert-before", first.stmt, code=code))
        out.report("MA103", first.stmt, f"--{flag}", *fixes)
    if needs_os:
        out.fixes.append(facts.import_fix(Codemod.CLOUD_PATHS, "MA101", "import os\n"))

"""Cloud paths (MA101-MA108): hard-coded local paths become the ModelArts channel arguments.

ModelArts downloads the input channel to the directory it passes as ``--data_url`` and uploads
only the ``--train_url`` directory, so a path under the old data or output root is rewritten to
the same place under the channel's argument (``path_plan`` says where), and the argument is added
to the parser (defaulting to the old root) when it is missing, but only when every read (or
write) the file reports of that kind is rewired to it in the same rewrite: an argument nothing
reads would silence MA103 while the script still reads from the working directory. Otherwise no
argument is added, and the findings stay for ``check`` to report.
"""

from __future__ import annotations

import posixpath

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.facts.records import PathConstant, PathSite
from majob.migrate.findings import FileFindings, Fix
from majob.migrate.path_channels import Channels, py_str
from majob.migrate.path_defaults import plan_defaults
from majob.migrate.path_plan import (
    RULE_OF_KIND,
    PathPlan,
    adopt_strings_under_outputs,
    plan_roots,
    settle_directions,
)
from majob.migrate.rules import Codemod


def check_cloud_paths(facts: FileFacts, out: FileFindings) -> None:
    """MA101-MA108: hard-coded local paths, hub models, and the channel arguments."""
    plan = PathPlan(facts, Channels.of(facts))
    _ma104_parse_args(facts, out)
    _ma105_writes_into_input(facts, out)
    _ma106_flag_spellings(facts, out)
    _ma107_rejected_arguments(facts, out)
    _ma108_hub_literals(facts, out)
    settle_directions(facts.paths)
    adopt_strings_under_outputs(facts)
    plan_roots(plan)
    _ma101_ma102_literals(plan)
    _ma101_ma102_constants(plan)
    plan_defaults(plan)
    complete = _ma101_ma102_report(plan, out)
    _ma103_channel_arguments(plan, out, complete)
    _ma107_configurator_globals(plan, out, complete)
    fixes = [f for f in out.fixes if f.codemod is Codemod.CLOUD_PATHS]
    if facts.binding("os") is None and any("os." in f.code for f in fixes):
        out.fixes.append(facts.import_fix(Codemod.CLOUD_PATHS, "MA101", "import os\n"))


def _ma104_parse_args(facts: FileFacts, out: FileFindings) -> None:
    """argparse's parse_args; an optparse parser's (``add_option``, ``(options, args) =
    parser.parse_args()``) has no parse_known_args and is left alone."""
    optparse = any(q == "optparse" or q.startswith("optparse.") for q in facts.aliases.values())
    for call in facts.parse_args_calls:
        receiver = call.receiver or ""
        known = receiver in facts.argparse_parsers or facts.parser_sizes.get(receiver)
        if optparse and not known:
            continue
        name = "tuple" if call.whole else "index"
        fix = Fix(Codemod.CLOUD_PATHS, "MA104", "parse-known-args", call.span, name=name)
        out.report("MA104", call.span, "", fix)


def _ma105_writes_into_input(facts: FileFacts, out: FileFindings) -> None:
    for write in facts.writes_into_input:
        out.report("MA105", write.span, write.detail)


def _ma106_flag_spellings(facts: FileFacts, out: FileFindings) -> None:
    """``add_argument("--world-size")``: the spelling the platform passes is added beside it."""
    for site, declared in facts.flag_spellings:
        code = f"{declared}, {py_str(site.detail)}"
        fix = Fix(Codemod.CLOUD_PATHS, "MA106", "replace-expr", site.span, code=code)
        out.report("MA106", site.span, f"ModelArts passes {site.detail}", fix)


def _ma108_hub_literals(facts: FileFacts, out: FileFindings) -> None:
    """``from_pretrained("bert-base-uncased")``: no flag to move to data_url, so no fix."""
    for site in facts.hub_literals:
        out.report("MA108", site.span, f"from_pretrained({py_str(site.detail)}) downloads it")


def _ma107_rejected_arguments(facts: FileFacts, out: FileFindings) -> None:
    for site in facts.rejects_arguments:
        if facts.configurator is None or site.span.line != facts.configurator.span.line:
            out.report("MA107", site.span, site.detail)


def _ma107_configurator_globals(
    plan: PathPlan, out: FileFindings, complete: set[pt.PathKind]
) -> None:
    """A nanoGPT-style configurator accepts ``--train_url`` once a ``train_url`` global exists:
    declared before it runs, for each channel the file then reads everywhere."""
    facts, config = plan.facts, plan.facts.configurator
    site = next((s for s in facts.rejects_arguments if config and s.span.line == config.line), None)
    if config is None or site is None:
        return
    code = ""
    for kind, flag in pt.CHANNEL_FLAGS.items():
        if flag in facts.flags or kind not in complete or plan.channels.host is not None:
            continue
        default = plan.default_code.get(kind) or py_str(plan.roots[kind] or pt.DEFAULT_ROOTS[kind])
        code += f"{flag} = {default}  # ModelArts passes --{flag}: the configurator sets it\n"
    fixes = [Fix(Codemod.CLOUD_PATHS, "MA107", "insert-before", config.span, code=code)]
    out.report("MA107", site.span, site.detail, *(fixes if code else []))


def _ma101_ma102_literals(plan: PathPlan) -> None:
    """Path literals in path positions, rewritten under the channel's argument; the uses of one
    literal are rewritten all together or not at all."""
    facts = plan.facts
    planned: list[tuple[PathSite, str, list[Fix]]] = []
    blocked: set[str] = set()
    for site in facts.paths:
        kind = site.use.kind
        rule = RULE_OF_KIND[kind]
        rel = plan.rel(kind, site.use.value)
        fixes: list[Fix] = []
        detail = repr(site.use.value)
        args = plan.channels.args_at(site.scope, site.line)
        if args is not None and rel is not None:
            # a variable's trailing slash may be relied on (root + "model.pt"); a call's not
            slash = site.named and site.use.value.endswith("/")
            expr = plan.channels.expr(args, kind, rel, slash)
            if site.template_rest is not None:
                # f"ckpt/e{epoch}.pt" -> os.path.join(args.train_url, "ckpt", f"e{epoch}.pt")
                code = plan.channels.joined(args, kind, rel, site.template_rest)
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
        elif (sibling := _sibling_of_parameter(plan, site)) is not None:
            fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", site.span, code=sibling))
        else:
            blocked.add(posixpath.normpath(site.use.value))
        planned.append((site, detail, fixes))
    for site, detail, fixes in planned:
        if posixpath.normpath(site.use.value) in blocked:
            fixes = []
        plan.add(site.use.kind, site.span, detail, *fixes)


def _ma101_ma102_constants(plan: PathPlan) -> None:
    """Module constants used as paths: reported at the literal, fixed at their uses."""
    for group_kind, group in plan.constants.items():
        rule = RULE_OF_KIND[group_kind]
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
            slash = (constant.value or "").endswith("/")
            for span, scope, line in constant.uses:
                expr = (
                    plan.channel_expr(group_kind, rel, scope, line, slash)
                    if rel is not None
                    else None
                )
                if expr is not None:
                    fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", span, code=expr))
            if len(fixes) != len(constant.uses):
                fixes = []  # every use moves, or none does
            if not constant.routable and not routed:
                fixes = _in_place(plan, group_kind, constant)
            plan.add(group_kind, constant.literal_span, f"{constant.name} = {shown}", *fixes)


def _in_place(plan: PathPlan, kind: pt.PathKind, constant: PathConstant) -> list[Fix]:
    """``data_dir = os.path.join("data", dataset)`` after the channel exists (a configurator's
    globals): the literal itself becomes the channel, the rest of the value stays."""
    rel = plan.rel(kind, constant.literal_text)
    module = plan.facts.scope
    slash = constant.literal_text.endswith("/")
    expr = plan.channel_expr(kind, rel, module, constant.line, slash) if rel is not None else None
    if expr is None:
        return []
    rule = RULE_OF_KIND[kind]
    return [Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", constant.literal_span, code=expr)]


def _ma101_ma102_report(plan: PathPlan, out: FileFindings) -> set[pt.PathKind]:
    """Report the planned findings. A kind whose channel argument is missing keeps its fixes
    only when every finding of the kind has one (the kinds returned): the argument is then added
    and read everywhere; otherwise nothing of that kind is rewritten."""
    complete: set[pt.PathKind] = set()
    for kind, flag in pt.CHANNEL_FLAGS.items():
        mine = [f for f in plan.findings if f.kind == kind]
        declared = flag in plan.facts.flags
        if declared or (mine and all(f.fixes for f in mine)):
            complete.add(kind)
    for finding in plan.findings:
        fixes = finding.fixes if finding.kind in complete else []
        rule = finding.rule or RULE_OF_KIND[finding.kind]
        out.report(rule, finding.span, finding.detail, *fixes)
    return complete


def _ma103_channel_arguments(plan: PathPlan, out: FileFindings, complete: set[pt.PathKind]) -> None:
    facts = plan.facts
    host = plan.channels.host or (facts.parses[0] if facts.parses else None)
    for kind, flag in pt.CHANNEL_FLAGS.items():
        if host is None or flag in facts.flags:
            continue
        fixes = []
        if host.parser_name and kind in complete:
            if kind in plan.default_code:
                default = plan.default_code[kind]
            else:
                default = py_str(plan.roots[kind] or pt.DEFAULT_ROOTS[kind])
            help_text = f"ModelArts passes the {flag} channel's local directory here"
            code = (
                f'{host.parser_name}.add_argument("--{flag}", type=str, '
                f"default={default}, help={py_str(help_text)})\n"
            )
            fixes.append(Fix(Codemod.CLOUD_PATHS, "MA103", "insert-before", host.stmt, code=code))
        out.report("MA103", host.stmt, f"--{flag}", *fixes)


def _sibling_of_parameter(plan: PathPlan, site: PathSite) -> str | None:
    """``shutil.copyfile(filename, "model_best.pth.tar")`` in ``save_checkpoint(state,
    filename=...)``: a file written beside the path parameter goes where it goes."""
    value = site.use.value
    if site.use.kind != "output" or "/" in value or site.mkdir or site.template_rest is not None:
        return None
    for default in plan.facts.defaults:
        beside = default.origin == "parameter" and default.scope is site.scope
        if beside and default.kind == "output":
            os_name = plan.os_name
            return f"{os_name}.path.join({os_name}.path.dirname({default.name}), {py_str(value)})"
    return None

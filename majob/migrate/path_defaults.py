"""Paths named before they are used (MA101/MA102; MA108 for a hub id): argparse defaults,
parameter defaults, config values, literals handed to the script's own functions, and the
directories a call writes when it is given none (``SummaryWriter()``, Lightning's ``Trainer()``).

A flag's default moves to its channel right after the arguments are parsed, and only when the
flag was not given (``if args.data == "./imagenet": args.data = args.data_url``): a path passed
on the command line stays what it was, whatever the flag's name or kind (positional too).
Parameter defaults and config values stay fixed by hand.
"""

from __future__ import annotations

import posixpath

from majob.migrate import frameworks as fw
from majob.migrate import patterns as pt
from majob.migrate.facts.records import CallLiteral, DefaultPath
from majob.migrate.findings import Fix
from majob.migrate.path_channels import py_str
from majob.migrate.path_plan import (
    RULE_OF_KIND,
    PathPlan,
    bound_parameter,
    default_kind,
    lies_under,
    written_paths,
)
from majob.migrate.rules import Codemod


def plan_defaults(plan: PathPlan) -> None:
    """Every named path, planned with its fix where one is safe."""
    facts = plan.facts
    passed: dict[tuple[str, str], list[Fix]] = {}  # fixes of the literals given for a parameter
    written = written_paths(facts.paths, plan.constants.get("output", []))
    for literal in facts.call_literals:
        _call_literal(plan, literal, passed, written)
    if facts.project is not None:
        for literal in facts.imported_literals:
            _call_literal(plan, literal, passed, written)
    for default in facts.defaults:
        if default.origin == "argument" and default.name in facts.rewired:
            continue  # moved to its channel after parsing already
        if default.origin == "parameter" and _placed_by_another_parameter(plan, default):
            continue
        kind = default_kind(default.kind, default.name, default.value)
        flag = default.origin in ("argument", "dataclass")  # HfArgumentParser: a field a flag
        what = "--" + default.name if flag else default.name
        verb = "is set to" if default.origin == "config" else "defaults to"
        rule = None
        if default.origin == "argument":
            fix = _flag_fix(plan, default, kind)
            fixes = [fix] if fix else []
            if kind == "input" and _hub_model(plan, default):
                rule = "MA108"
                fixes = [f._replace(rule=rule) for f in fixes]
        elif default.origin == "dataclass":
            fixes = []  # read as model_args.<field>: moved by hand
            if kind == "input" and _hub_model(plan, default):
                rule = "MA108"
        elif default.origin == "parameter":
            planned = _parameter_fixes(plan, default, kind)
            if planned is None:  # every call gives its own path: they move, the default is unused
                function = default.scope.function if default.scope else None
                planned = passed.get((function or "", default.name), [])
                if not planned:
                    continue  # what the callers give is judged where they give it
            fixes = planned
        else:
            fixes = []
        plan.add(kind, default.span, f"{what} {verb} {default.value!r}", *fixes, rule=rule)
    _implicit_dirs(plan)


def _hub_model(plan: PathPlan, default: DefaultPath) -> bool:
    """``--model_name_or_path`` defaulting to ``bert-base-uncased``: a model the script would
    download from the Hugging Face hub, which a training container usually cannot reach. Its
    fix is a path's (the default reads ``<data_url>/bert-base-uncased``); its message says why."""
    return fw.hub_id(default.value) and fw.model_argument(
        default.name, plan.facts.pretrained_sources
    )


def _placed_by_another_parameter(plan: PathPlan, default: DefaultPath) -> bool:
    """``def __init__(self, folder, name="log.csv")``: the file name looks like a path, but the
    function's path is another parameter (``folder`` reaches a path position, ``name`` does not):
    the name lands under it, where the callers' folder is judged, not in the working directory.
    A parameter that reaches a path position itself, or a function with no other path
    parameter, is judged by its default as before."""
    function = default.scope.function if default.scope else None
    if function is None:
        return False
    paths = {param for (f, param) in plan.facts.path_params if f == function}
    return bool(paths) and default.name not in paths


def _flag_fix(plan: PathPlan, default: DefaultPath, kind: pt.PathKind) -> Fix | None:
    """``if args.data == "./imagenet": args.data = args.data_url``, right after the parse."""
    host = plan.channels.host
    rel = plan.rel(kind, default.value)
    if host is None or host.args_name is None or rel is None or not default.plain:
        return None
    if default.span.line > host.stmt.line:
        return None  # declared after the parse (in a function defined later): left by hand
    args = host.args_name
    channel = plan.channels.expr(args, kind, rel, default.value.endswith("/"))
    code = (
        f"if {args}.{default.name} == {py_str(default.value)}:\n"
        f"    {args}.{default.name} = {channel}\n"
    )
    return Fix(Codemod.CLOUD_PATHS, RULE_OF_KIND[kind], "insert-after", host.stmt, code=code)


def _parameter_fixes(plan: PathPlan, default: DefaultPath, kind: pt.PathKind) -> list[Fix] | None:
    """``def save_checkpoint(state, filename="checkpoint.pth.tar")``: every call in this file
    that leaves the parameter to its default passes it under the channel instead."""
    facts = plan.facts
    function = default.scope.function if default.scope else None
    params = facts.function_params.get(function or "", [])
    rel = plan.rel(kind, default.value)
    calls = [c for c in facts.helper_calls if c.callee == function]
    if function is None or not calls:
        return []
    index = params.index(default.name) if default.name in params else len(params)
    fixes = []
    for call in calls:
        shift = 1 if call.method and params[:1] in (["self"], ["cls"]) else 0
        if default.name in call.passed or call.positional + shift > index:
            continue  # the caller gives its own path
        slash = default.value.endswith("/")
        code = (
            plan.channel_expr(kind, rel, call.scope, call.line, slash) if rel is not None else None
        )
        if code is None:
            return []
        rule = RULE_OF_KIND[kind]
        fixes.append(
            Fix(Codemod.CLOUD_PATHS, rule, "set-kwarg", call.span, name=default.name, code=code)
        )
    return fixes or None


def _call_literal(
    plan: PathPlan,
    literal: CallLiteral,
    passed: dict[tuple[str, str], list[Fix]],
    written: set[str],
) -> None:
    """A literal handed to a local function whose parameter reaches a path position; one read
    under a folder the script writes (a helper that finds the newest checkpoint) is an output."""
    facts = plan.facts
    param, kind = bound_parameter(facts, literal)
    if (
        kind is None
        or literal.node_id in facts.skip_strings
        or not pt.is_local_path_literal(literal.value)
        or pt.is_code_file(literal.value)
    ):
        return
    fixes = []
    directory = literal.directory if literal.rest is not None else literal.value
    if kind == "input" and lies_under(posixpath.normpath(directory or "."), written):
        kind = "output"
    rel = plan.rel(kind, directory)
    args = plan.channels.args_at(literal.scope, literal.line) if literal.scope else None
    if rel is not None and args is not None:
        if literal.rest is not None:
            code = plan.channels.joined(args, kind, rel, literal.rest)
        else:
            code = plan.channels.expr(args, kind, rel, literal.value.endswith("/"))
        rule = RULE_OF_KIND[kind]
        fixes.append(Fix(Codemod.CLOUD_PATHS, rule, "replace-expr", literal.span, code=code))
    detail = f"{literal.value!r} is {literal.callee}()'s {param}, used as a path"
    plan.add(kind, literal.span, detail, *fixes)
    if param is not None:
        passed.setdefault((literal.callee, param), []).extend(fixes)


def _implicit_dirs(plan: PathPlan) -> None:
    """``SummaryWriter()`` writes under ./runs, Lightning under ./lightning_logs: given the
    output channel (its ``runs`` folder, the Trainer's default_root_dir)."""
    facts = plan.facts
    for site in facts.implicit_dirs:
        fixes = []
        code = plan.channel_expr("output", "runs", site.scope, site.line) if site.scope else None
        if code is not None:
            fix = Fix(
                Codemod.CLOUD_PATHS, "MA102", "set-kwarg", site.span, name="log_dir", code=code
            )
            fixes.append(fix)
        plan.add("output", site.span, f"with no log_dir it writes under {site.detail}", *fixes)
    if facts.lightning_root_set:
        return
    trainer_fixes = []
    for site in facts.lightning_dirs:
        code = plan.channel_expr("output", "", site.scope, site.line) if site.scope else None
        if site.detail == "Trainer" and code is not None:
            name = "default_root_dir"
            fix = Fix(Codemod.CLOUD_PATHS, "MA102", "set-kwarg", site.span, name=name, code=code)
            trainer_fixes.append(fix)
    every = len(trainer_fixes) == sum(s.detail == "Trainer" for s in facts.lightning_dirs)
    for site in facts.lightning_dirs:
        detail = f"this {site.detail} writes under the working directory (./lightning_logs)"
        plan.add("output", site.span, detail, *(trainer_fixes if every else []))

"""The plan the path rules share (MA101-MA103): the channels, the old root each replaces, and the
findings planned so far, which are reported together once every one of a kind is planned.

A path under the old data or output root moves to the same place under the channel's argument.
Every use of one literal moves together: a directory the script writes is an output also where it
is only tested or read back (resume). A directory tested for existence keeps its level under the
output channel (``os.path.isdir("checkpoint")`` becomes a test of ``<train_url>/checkpoint``, not
of the channel itself, which always exists): the resume reads from where the checkpoints are
saved, the output channel, which is where ModelArts' resumable training keeps them.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.facts.records import CallLiteral, PathConstant, PathSite, Scope
from majob.migrate.findings import Fix, Span
from majob.migrate.path_channels import Channels

RULE_OF_KIND: dict[pt.PathKind, str] = {"input": "MA101", "output": "MA102"}


class PlannedFinding(NamedTuple):
    """A path finding with the fixes that move it to its channel (none: fixed by hand)."""

    kind: pt.PathKind
    span: Span
    detail: str
    fixes: list[Fix]
    rule: str | None = None  # reported as the kind's rule (MA101/MA102) unless set


@dataclass
class PathPlan:
    """The channels, their roots, the path constants by kind, and the findings planned."""

    facts: FileFacts
    channels: Channels
    roots: dict[str, str | None] = field(default_factory=dict)
    default_code: dict[str, str] = field(default_factory=dict)
    constants: dict[pt.PathKind, list[PathConstant]] = field(default_factory=dict)
    findings: list[PlannedFinding] = field(default_factory=list)

    @property
    def os_name(self) -> str:
        return self.channels.os_name

    def add(
        self, kind: pt.PathKind, span: Span, detail: str, *fixes: Fix, rule: str | None = None
    ) -> None:
        self.findings.append(PlannedFinding(kind, span, detail, list(fixes), rule))

    def channel_expr(
        self, kind: pt.PathKind, rel: str, scope: Scope, line: int, slash: bool = False
    ) -> str | None:
        """``args.<channel>`` joined with ``rel`` where the arguments are in scope, else None
        (``slash``: keep a trailing separator, see ``Channels.expr``)."""
        args = self.channels.args_at(scope, line)
        return None if args is None else self.channels.expr(args, kind, rel, slash)

    def rel(self, kind: pt.PathKind, value: str) -> str | None:
        root = self.roots.get(kind)
        return pt.relative_to_root(value, root) if root else None


def settle_directions(sites: list[PathSite]) -> None:
    """One direction per literal: a path that is, or lies under, a directory the script writes
    (or a file it writes) is an output wherever it appears (``isdir``, ``torch.load`` on resume).
    Existence tests and copy sources with no writer take the input side."""
    written = written_paths(sites)
    for site in sites:
        path = posixpath.normpath(site.use.value)
        over = site.neutral and any(w.startswith(path.rstrip("/") + "/") for w in written)
        if site.use.kind != "output" and (lies_under(path, written) or over):
            site.use = pt.PathUse(site.use.value, "output", site.use.is_dir or over)


def written_paths(sites: list[PathSite], constants: Sequence[PathConstant] = ()) -> set[str]:
    """The files and directories the script writes (normalized): output path sites and their
    folders, and output path constants with theirs (of ``"checkpoints/{api}/{time}"``, the
    folders before the first field: ``checkpoints``)."""
    written: set[str] = set()
    for site in sites:
        if site.use.kind == "output" and not site.neutral:
            path = posixpath.normpath(site.use.value)
            written.add(path)
            parent = path if site.use.is_dir else posixpath.dirname(path)
            if parent not in ("", "."):
                written.add(parent)
    for constant in constants:
        if constant.kind != "output" or not constant.value:
            continue
        folder = _folder_before_fields(constant.value)
        if folder is None:  # no field: the constant is the folder, or a file in one
            value = constant.value
            folder = posixpath.dirname(value) if constant.is_file else value
        written.add(posixpath.normpath(folder or "."))
    written.discard(".")
    return written


def lies_under(path: str, written: set[str]) -> bool:
    """Whether the normalized ``path`` is one of ``written`` or lies under one."""
    return any(path == w or path.startswith(w.rstrip("/") + "/") for w in written)


def adopt_strings_under_outputs(facts: FileFacts) -> None:
    """A folder and the paths built under it move together: a string naming a file under a
    directory the script writes (``"checkpoints/last.pth"`` handed to any call, beside
    ``os.makedirs("checkpoints")``) is an output path too, rewritten with the folder."""
    written = {
        posixpath.normpath(s.use.value)
        for s in facts.paths
        if s.use.kind == "output" and s.use.is_dir and not s.neutral
    }
    written.discard(".")
    if not written:
        return
    for site, node_id in zip(facts.slash_strings, facts.slash_ids, strict=True):
        value = posixpath.normpath(site.use.value)
        if node_id in facts.skip_strings or not pt.is_local_path_literal(site.use.value):
            continue
        if not any(value.startswith(w + "/") for w in written) or site.span in facts.site_at:
            continue
        # the head of a formatted path ("results/e_" + str(epoch)) is reported with the whole
        if not any(known.span.contains(site.span) for known in facts.paths):
            facts.site_at[site.span] = site
            facts.paths.append(site)


def plan_roots(plan: PathPlan) -> None:
    """The old root each channel replaces: the declared default of a channel flag the script
    has, the one path constant, or the common directory of every path of the kind."""
    facts = plan.facts
    plan.constants = {"input": [], "output": []}
    for constant in facts.constants.values():
        kind = constant.kind or pt.kind_from_name(constant.name)
        if constant.uses and kind and (constant.kind or pt.path_constant_name(constant.name)):
            constant.kind = kind
            plan.constants[kind].append(constant)
    for kind, flag in pt.CHANNEL_FLAGS.items():
        uses = [p.use for p in facts.paths if p.use.kind == kind] + _default_uses(facts, kind)
        uses += _literal_uses(facts, kind)
        routable = [c for c in plan.constants[kind] if c.routable]
        if flag in facts.flags:
            declared = facts.flags[flag]
            plan.roots[kind] = pt.channel_root(uses, declared) if declared is not None else None
        elif len(routable) == 1 and len(plan.constants[kind]) == 1 and not uses:
            constant = routable[0]
            folder = _folder_before_fields(constant.value or "")
            if folder is not None:
                # "checkpoints/{api}/{time}": the channel is the folder before the fields, and
                # the uses keep the rest (os.path.join(args.train_url, "{api}/{time}").format)
                plan.roots[kind] = folder
                continue
            plan.roots[kind] = None  # the constant is the root (its uses are routed)
            plan.default_code[kind] = (
                f"{plan.os_name}.path.dirname({constant.name})"
                if constant.is_file
                else constant.name
            )
        else:
            plan.roots[kind] = _tested_root(
                facts.paths, kind, pt.channel_root(uses) or pt.DEFAULT_ROOTS[kind]
            )


# A field of a str.format template or a %-format (with the escapes, matched to be skipped).
_FIELDS = re.compile(
    r"\{\{|%%|\{|%(?:\([^)]*\))?[-#0 +]*(?:\d+|\*)?(?:\.(?:\d+|\*))?[diouxXeEfFgGcrsa]"
)


def _folder_before_fields(value: str) -> str | None:
    """The folder a template path starts with (``"checkpoints/{api}/{time}"`` ->
    ``checkpoints``; ``"out/run_%d"`` -> ``out``; ``"run_{}.pt"`` -> ``.``), or None for a path
    with no ``{}`` or ``%`` field (``{{`` and ``%%`` are text)."""
    first = next((m for m in _FIELDS.finditer(value) if m.group() not in ("{{", "%%")), None)
    if first is None:
        return None
    return posixpath.dirname(value[: first.start()]) or "."


def _tested_root(sites: list[PathSite], kind: pt.PathKind, root: str) -> str:
    """A root the script tests for existence (``os.path.isdir("checkpoint")`` before a resume)
    keeps its level: under the channel that test still means something."""
    normal = posixpath.normpath(root)
    if any(
        s.neutral and s.use.kind == kind and posixpath.normpath(s.use.value) == normal
        for s in sites
    ):
        parent = posixpath.dirname(normal)
        return parent if parent not in ("",) else "."
    return root


def _default_uses(facts: FileFacts, kind: pt.PathKind) -> list[pt.PathUse]:
    """The argparse defaults of the kind, as uses: the channel's root covers them too."""
    return [
        pt.PathUse(d.value, kind, not pt.looks_like_file(d.value.rstrip("/").rsplit("/", 1)[-1]))
        for d in facts.defaults
        if d.origin == "argument" and default_kind(d.kind, d.name, d.value) == kind
    ]


def default_kind(kind: pt.PathKind | None, name: str, value: str) -> pt.PathKind:
    """A default's direction: from its uses, else its name, else its value."""
    kind = kind or pt.kind_from_name(name) or pt.kind_from_name(value)
    if kind is None:
        # a checkpoint-like file is written; a picture, a sound or a table is read
        read = value.lower().endswith(_READ_EXTENSIONS)
        kind = "output" if pt.looks_like_data_file(value) and not read else "input"
    return kind


_READ_EXTENSIONS = (".jpg", ".jpeg", ".png", ".wav", ".mp4", ".csv", ".parquet", ".txt", ".json")


def _literal_uses(facts: FileFacts, kind: pt.PathKind) -> list[pt.PathUse]:
    """The literals handed to local functions as paths of the kind, as uses."""
    found = []
    for literal in [*facts.call_literals, *facts.imported_literals]:
        param, used = bound_parameter(facts, literal)
        if param and used == kind:
            value = literal.directory if literal.rest is not None else literal.value
            found.append(pt.PathUse(value, kind, literal.rest is not None))
    return found


def bound_parameter(
    facts: FileFacts, literal: CallLiteral
) -> tuple[str | None, pt.PathKind | None]:
    """The parameter a passed literal binds, of a local function or of a helper of the
    project (``facts.project``), and the direction that parameter is used in there."""
    params = facts.function_params.get(literal.callee)
    keywords = facts.keyword_params.get(literal.callee, [])
    kinds: dict[str, str] = {p: k for (f, p), k in facts.path_params.items() if f == literal.callee}
    if params is None and facts.project is not None and "." in literal.callee:
        helper = facts.project.helper(literal.callee)
        if helper is not None:
            params, keywords, kinds = helper
    if params is None:
        return None, None
    if literal.keyword is not None:
        param = literal.keyword if literal.keyword in [*params, *keywords] else None
    else:
        shift = 1 if literal.method and params[:1] in (["self"], ["cls"]) else 0
        index = literal.position + shift
        param = params[index] if index < len(params) else None
    kind = kinds.get(param) if param else None
    return param, "output" if kind == "output" else "input" if kind == "input" else None

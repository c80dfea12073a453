"""The plain records the single pass fills and the rules read: sites, scopes, constants, loops.

Each record is a fact about one place in a file; none decides a rule (``rules_paths``,
``rules_distributed`` and ``rules_npu`` do).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import NamedTuple

from majob.migrate import patterns as pt
from majob.migrate.findings import Fix, Span


@dataclass(eq=False)
class Scope:
    """A module, function, class or lambda body; compared by identity."""

    is_module: bool
    rank_guarded: bool = False
    function: str | None = None  # the function's name, for guards followed through calls
    span: Span | None = None  # the ``def`` line (name's line), for fixes at the top of the body
    # A function that loops or calls a collective is no save helper to return early from.
    loops_or_syncs: bool = False
    class_name: str | None = None  # a class body: its __init__ is called by the class's name


class ParseSite(NamedTuple):
    """``args = parser.parse_args()`` (or ``parse_known_args``): where the parsed arguments live."""

    scope: Scope
    end_line: int
    stmt: Span
    args_name: str | None
    parser_name: str | None


@dataclass
class PathSite:
    """A local path literal in a path position (``open``, ``torch.save``, ``np.load``...)."""

    span: Span
    use: pt.PathUse
    scope: Scope
    line: int
    neutral: bool = False  # an existence test or a copy source: its direction comes from others
    mkdir: Span | None = None  # the os.mkdir/os.makedirs call without exist_ok around the literal
    # f"ckpt/e{epoch}.pt", "ckpt/e%d.pt" % epoch, "ckpt/e{}.pt".format(epoch): the span is the
    # whole expression, ``use.value`` its directory, and this the expression without it
    template_rest: str | None = None
    named: bool = False  # reached through a variable (root = "out/" ... root + "model.pt")


@dataclass
class PathConstant:
    """A module-level ``NAME = "path"`` (or ``os.path.join(..., "file")``) used as a path."""

    name: str
    line: int
    value: str | None  # the literal, for a plain string constant
    base_name: str  # the last literal segment (the file name for a file)
    is_file: bool
    kind: pt.PathKind | None  # from a use in a path position, else from the name
    literal_span: Span  # where the user edits it: the literal (or the joined call)
    routable: bool = True  # False when the value keeps a variable part (join('data', name))
    literal_text: str = ""  # the literal the user edits, when that is the fix (not routable)
    uses: list[tuple[Span, Scope, int]] = field(default_factory=list)


@dataclass
class DefaultPath:
    """A path literal that is the default of a function parameter or of an argparse flag."""

    name: str  # the parameter, or the flag's dest (used as ``args.<dest>``)
    span: Span
    value: str
    # "parameter", "argument", "config" (an attribute or keyword of a config) or "dataclass" (a
    # field of a dataclass HfArgumentParser makes flags of)
    origin: str
    scope: Scope | None  # the function, for a parameter
    kind: pt.PathKind | None = None  # from a use in a path position
    plain: bool = True  # a flag holding one str (no type= conversion, no nargs list)


class CallLiteral(NamedTuple):
    """A string literal (or a path formatted from one) passed to a function of the file
    (``f("./out")``, ``save(m, filename="ckpt_{}.pt".format(e))``)."""

    callee: str
    position: int  # -1 for a keyword argument
    keyword: str | None
    method: bool  # called as ``obj.f(...)``: a ``self`` parameter comes first
    value: str  # the literal's text (a formatted path: its text up to the first field)
    span: Span  # the literal, or the whole formatted expression
    node_id: int  # the literal's node, to skip one that another path rule reported
    scope: Scope | None = None
    line: int = 0
    # a formatted path (``"ckpt/e{}.pt".format(e)``): its directory and the rest of its text
    directory: str = ""
    rest: str | None = None


class Loader(NamedTuple):
    """A ``DataLoader(...)`` call."""

    span: Span
    target: str | None
    shuffles: bool
    has_sampler: bool
    dataset: str | None
    scope: Scope | None = None


@dataclass
class EpochLoop:
    """A ``for`` loop whose target names an epoch; ``refs`` are the names used in its body."""

    span: Span
    target: str | None
    nested: bool
    scope: Scope | None = None
    refs: dict[str, None] = field(default_factory=dict)
    node: ast.For | ast.AsyncFor | None = None  # the statement (``--to resume`` rewrites it)


class Save(NamedTuple):
    """A ``torch.save(...)`` call and the rank guard around it."""

    span: Span
    stmt: Span | None  # the statement when the save is a whole expression statement
    guard: str | None  # None, "global" or "local"
    scope: Scope | None = None


class CallSite(NamedTuple):
    """A call of a function defined in the file (``f(...)``, ``self.f(...)``) and its guard."""

    callee: str
    guard: str | None
    caller: str | None  # the calling function's name, None at module level


class DataParallelCall(NamedTuple):
    """A ``DataParallel(module)`` call; ``module_src``: what the wrapped name becomes under DDP."""

    span: Span
    stmt: Span | None
    target: str | None
    module_src: str | None
    scope: Scope
    line: int


class NpuCandidate(NamedTuple):
    """An NPU finding kept until the end: whether it is reported depends on later imports."""

    rule: str
    span: Span
    detail: str
    fix: Fix | None = None


class Site(NamedTuple):
    """A place a rule reports as is, with the detail its message shows."""

    span: Span
    detail: str
    scope: Scope | None = None  # where it is, for a fix that needs the parsed arguments

    @property
    def line(self) -> int:
        return self.span.line


class ParseArgsCall(NamedTuple):
    """A ``parse_args()`` call; ``whole`` when it is the whole value of ``name = ...``."""

    span: Span
    whole: bool
    receiver: str | None = None  # the parser's name, when it is a name


class ArgsAlias(NamedTuple):
    """``args, text = _parse_args()``: the parsed arguments are ``name`` in ``scope`` from
    ``line`` on."""

    name: str
    scope: Scope
    line: int
    source: str  # the function that returned them


class ArgsPass(NamedTuple):
    """A call passing parsed arguments on: ``callee``'s parameter at ``index`` (or ``keyword``)."""

    callee: str
    position: int
    keyword: str | None
    method: bool
    name: str
    scope: Scope


class HelperCall(NamedTuple):
    """A call of a local function with a path parameter default: which parameters it passes."""

    callee: str
    span: Span
    passed: frozenset[str]  # keywords given
    positional: int  # how many positional arguments
    method: bool
    scope: Scope
    line: int

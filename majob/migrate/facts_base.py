"""The state the single pass keeps, the records it fills, and helpers every collector uses.

``facts.FileFacts`` walks the tree; the collectors of each rule family (``facts_paths``,
``facts_distributed``, ``facts_npu``) add to the records below through the methods they own.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from majob.migrate import patterns as pt
from majob.migrate.findings import Fix, Span
from majob.migrate.rules import Codemod
from majob.migrate.source_text import SourceText

_BUILTINS = {"open": "builtins.open"}
TOP_OF_FILE = Span(1, 0, 1, 0)


@dataclass(eq=False)
class Scope:
    """A module, function, class or lambda body; compared by identity."""

    is_module: bool
    rank_guarded: bool = False
    function: str | None = None  # the function's name, for guards followed through calls
    span: Span | None = None  # the ``def`` line (name's line), for fixes at the top of the body
    # A function that loops or calls a collective is no save helper to return early from.
    loops_or_syncs: bool = False


@dataclass
class ParseSite:
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
    uses: list[tuple[Span, Scope, int]] = field(default_factory=list)


@dataclass
class DefaultPath:
    """A path literal that is the default of a function parameter or of an argparse flag."""

    name: str  # the parameter, or the flag's dest (used as ``args.<dest>``)
    span: Span
    value: str
    origin: str  # "parameter", "argument" or "config" (an attribute or keyword of a config)
    scope: Scope | None  # the function, for a parameter
    kind: pt.PathKind | None = None  # from a use in a path position


@dataclass(frozen=True)
class CallLiteral:
    """A string literal passed positionally to a function of the file (``f("./out")``)."""

    callee: str
    index: int
    method: bool  # called as ``obj.f(...)``: a ``self`` parameter comes first
    value: str
    span: Span
    node_id: int  # the literal's node, to skip one that another path rule reported


@dataclass
class Loader:
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


@dataclass
class Save:
    """A ``torch.save(...)`` call and the rank guard around it."""

    span: Span
    stmt: Span | None  # the statement when the save is a whole expression statement
    guard: str | None  # None, "global" or "local"
    scope: Scope | None = None


@dataclass(frozen=True)
class CallSite:
    """A call of a function defined in the file (``f(...)``, ``self.f(...)``) and its guard."""

    callee: str
    guard: str | None
    caller: str | None  # the calling function's name, None at module level


@dataclass
class DataParallelCall:
    """A ``DataParallel(module)`` call; ``module_src``: what the wrapped name becomes under DDP."""

    span: Span
    stmt: Span | None
    target: str | None
    module_src: str | None
    scope: Scope
    line: int


@dataclass
class NpuCandidate:
    """An NPU finding kept until the end: whether it is reported depends on later imports."""

    rule: str
    span: Span
    detail: str
    fix: Fix | None = None


@dataclass(frozen=True)
class Site:
    """A place a rule reports as is, with the detail its message shows."""

    span: Span
    detail: str


@dataclass(frozen=True)
class ParseArgsCall:
    """A ``parse_args()`` call; ``whole`` when it is the whole value of ``name = ...``."""

    span: Span
    whole: bool


class FactsBase:
    """What the pass knows while it walks (imports, scope, guards, loops) and what it recorded."""

    def __init__(self, source: str, npu: bool) -> None:
        self.npu = npu
        text = SourceText(source)
        self.span: Callable[[ast.AST], Span] = text.span
        self.segment: Callable[[ast.AST], str | None] = text.segment
        self.aliases: dict[str, str] = {}
        self.scope = Scope(is_module=True)
        self.stmt: ast.stmt | None = None
        self.guards: list[frozenset[str]] = []
        self.loops: list[EpochLoop] = []
        self.all_loops: list[EpochLoop] = []
        self.parses: list[ParseSite] = []
        self.flags: dict[str, str | None] = {}
        self.injected_defaults: set[int] = set()  # defaults of --init_method (ModelArts passes it)
        self.skip_strings: set[int] = set()
        self.paths: list[PathSite] = []
        self.constants: dict[str, PathConstant] = {}
        self.defaults: list[DefaultPath] = []
        self.in_add_argument = False
        self.in_display = False
        self.functions: dict[str, None] = {}
        self.function_params: dict[str, list[str]] = {}  # positional parameters by function
        self.path_params: dict[tuple[str, str], pt.PathKind] = {}  # (function, param) -> kind
        self.derived: dict[tuple[int, str], str] = {}  # (scope id, local) -> parameter
        self.call_literals: list[CallLiteral] = []
        self.call_sites: list[CallSite] = []
        # (scope id, name) -> the rank guard every non-None value of the name was built under
        self.built_under: dict[tuple[int, str], str | None] = {}
        self.loads: list[tuple[Span, ast.Name]] = []
        self.loaders: list[Loader] = []
        self.samplers: list[tuple[Span, str | None]] = []
        self.sets_epoch = False
        self.saves: list[Save] = []
        self.state_dicts: list[tuple[Span, ast.Name]] = []
        # Names tested for a wrapper around the code being walked (hasattr(m, "module")).
        self.unwrap_tested: list[str] = []
        self.data_parallel: list[DataParallelCall] = []
        self.wrapped: dict[str, None] = {}
        self.has_ddp = False
        self.has_init = False
        self.imports_torch_npu = False
        self.has_transfer = False
        self.candidates: list[NpuCandidate] = []
        self.first_import: Span | None = None
        self.first_torch_import: Span | None = None
        # Sites that rules report as they are, in the order the pass met them.
        self.parse_args_calls: list[ParseArgsCall] = []
        self.writes_into_input: list[Site] = []
        self.data_parallel_functions: list[Site] = []
        self.environ_writes: list[Site] = []  # detail: the variable's name
        self.tcp_addresses: list[Site] = []
        # add_argument("--world-size") for the --world_size ModelArts passes: (site, its source)
        self.flag_spellings: list[tuple[Site, str]] = []
        self.implicit_dirs: list[Site] = []  # SummaryWriter(): detail the directory it uses
        self.inits: list[Site] = []  # init_process_group calls; detail "env" or "given"

    # ------------------------------------------------------------------ helpers

    def qualname(self, node: ast.AST) -> str | None:
        """The imported name ``node`` stands for (``np.load`` -> ``numpy.load``), if known."""
        if type(node) is ast.Name:
            return self.aliases.get(node.id) or _BUILTINS.get(node.id)
        if type(node) is ast.Attribute:
            base = self.qualname(node.value)
            return f"{base}.{node.attr}" if base else None
        return None

    def binding(self, *qualnames: str) -> str | None:
        """The local name bound to any of ``qualnames`` by an import, for fixes to use."""
        for name, qual in self.aliases.items():
            if qual in qualnames:
                return name
        return None

    @staticmethod
    def words(node: ast.AST, subs: Iterable[ast.AST] | None = None) -> frozenset[str]:
        """The names in ``node`` (``subs``: its nodes, when the caller walked it already)."""
        found: set[str] = set()
        for sub in ast.walk(node) if subs is None else subs:
            if type(sub) is ast.Name:
                found.add(sub.id.lower())
            elif type(sub) is ast.Attribute:
                found.add(sub.attr.lower())
            elif (
                type(sub) is ast.Constant
                and type(sub.value) is str
                and sub.value.isidentifier()
                and sub.value.isupper()
            ):
                # os.environ["LOCAL_RANK"], os.getenv("RANK"): the variable names the rank.
                found.add(sub.value.lower())
        return frozenset(found)

    @staticmethod
    def guard_kind(words: Iterable[str]) -> str | None:
        ranky = [w for w in words if any(g in w for g in pt.RANK_GUARD_WORDS)]
        if not ranky:
            return None
        return "local" if all("local" in w for w in ranky) else "global"

    def _guard_words(self) -> set[str]:
        words: set[str] = set()
        for guard_words in self.guards:
            words |= guard_words
        return words


def insert_after(anchor: Span | None, codemod: Codemod, rule: str, code: str) -> Fix:
    """Insert ``code`` after the statement at ``anchor``, or at the top of the file without one."""
    if anchor is not None:
        return Fix(codemod, rule, "insert-after", anchor, code=code)
    return Fix(codemod, rule, "insert-top", TOP_OF_FILE, code=code)

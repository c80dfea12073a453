"""What the single pass knows while it walks (imports, scope, guards, loops), what it recorded,
and the helpers every collector uses to read a node (its qualified name, its words)."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable

from majob.migrate import patterns as pt
from majob.migrate.facts.nodes import subnodes
from majob.migrate.facts.records import (
    ArgsAlias,
    ArgsPass,
    CallLiteral,
    CallSite,
    DataParallelCall,
    DefaultPath,
    EpochLoop,
    HelperCall,
    Loader,
    NpuCandidate,
    ParseArgsCall,
    ParseSite,
    PathConstant,
    PathSite,
    Save,
    Scope,
    Site,
)
from majob.migrate.findings import Span
from majob.migrate.project import ProjectIndex
from majob.migrate.source_text import SourceText

_BUILTINS = {"open": "builtins.open"}


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
        self._init_arguments()
        self._init_paths()
        self._init_distributed()
        self._init_npu()
        self._init_sites()

    def _init_arguments(self) -> None:
        """What the argument parsers declare and where the parsed arguments go."""
        self.parses: list[ParseSite] = []
        self.parser_sizes: dict[str, int] = {}  # add_argument calls per parser name
        self.argparse_parsers: set[str] = set()  # names bound to argparse.ArgumentParser(...)
        self.returns_args: dict[str, int | None] = {}  # function -> tuple index of the args
        self.args_aliases: list[ArgsAlias] = []
        self.args_passes: list[ArgsPass] = []
        self.args_names: set[str] = set()  # names that hold parsed arguments somewhere
        self.flags: dict[str, str | None] = {}
        self.flag_dests: dict[str, str] = {}  # each --option (as an identifier) -> its dest
        self.injected_defaults: set[int] = set()  # defaults of --init_method (ModelArts passes it)

    def _init_paths(self) -> None:
        """Path literals, named paths and how they flow to path positions."""
        self.skip_strings: set[int] = set()
        self.paths: list[PathSite] = []
        self.constants: dict[str, PathConstant] = {}
        # Names joined below another path (os.path.join(args.train_url, CKPT_FOLDER)): a
        # folder's name under whatever the head is, not a path of its own.
        self.join_tails: set[int] = set()
        self.defaults: list[DefaultPath] = []
        self.in_add_argument = False
        self.in_display = False
        self.functions: dict[str, None] = {}
        self.function_params: dict[str, list[str]] = {}  # positional parameters by function
        self.keyword_params: dict[str, list[str]] = {}  # keyword-only parameters by function
        self.path_params: dict[tuple[str, str], pt.PathKind] = {}  # (function, param) -> kind
        self.derived: dict[tuple[int, str], str] = {}  # (scope id, local) -> parameter
        self.local_values: dict[tuple[int, str], ast.expr] = {}  # (scope id, name) -> last value
        self.self_attrs: dict[str, tuple[str, str]] = {}  # self.<attr> = <parameter>
        self.attr_uses: dict[str, pt.PathKind] = {}  # <obj>.<attr> in a path position
        self.flag_candidates: dict[str, DefaultPath] = {}  # string defaults of other flags
        # file-like strings set as config values or attributes whose names say nothing, with
        # their node's id: paths if their uses say so (see flow)
        self.config_candidates: dict[str, tuple[DefaultPath, int]] = {}
        self.site_at: dict[Span, PathSite] = {}  # one path site per literal
        # every short string with a slash outside a path position, and its node's id
        self.slash_strings: list[PathSite] = []
        self.slash_ids: list[int] = []
        self.rewired: set[str] = set()  # flags set from a channel after parsing
        self.helper_calls: list[HelperCall] = []  # calls of functions with path defaults
        self.default_functions: set[str] = set()  # functions with a path parameter default
        self.defined_names: set[str] = set()  # functions, methods and classes the file defines
        self.call_literals: list[CallLiteral] = []
        self.imported_literals: list[CallLiteral] = []  # handed to imported functions
        self.project: ProjectIndex | None = None  # the checked project's helpers, when known

    def _init_distributed(self) -> None:
        """Calls of local functions and their guards, loaders, saves, wrappers."""
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

    def _init_npu(self) -> None:
        """CUDA uses and the imports that cover them."""
        self.imports_torch_npu = False
        self.has_transfer = False
        # why torch_npu gets imported without the file importing it (accelerate, torch.accelerator)
        self.npu_loader: str | None = None
        self.candidates: list[NpuCandidate] = []
        self.first_import: Span | None = None
        self.first_torch_import: Span | None = None

    def _init_sites(self) -> None:
        """Sites that rules report as they are, in the order the pass met them."""
        self.parse_args_calls: list[ParseArgsCall] = []
        self.writes_into_input: list[Site] = []
        self.data_parallel_functions: list[Site] = []
        self.environ_writes: list[Site] = []  # detail: the variable's name
        self.tcp_addresses: list[Site] = []
        # a tcp:// flag default -> the flag's first option (its span and source), for a fix
        self.tcp_flags: dict[Span, tuple[Span, str]] = {}
        # add_argument("--world-size") for the --world_size ModelArts passes: (site, its source)
        self.flag_spellings: list[tuple[Site, str]] = []
        self.implicit_dirs: list[Site] = []  # SummaryWriter(): detail the directory it uses
        self.inits: list[Site] = []  # init_process_group calls; detail "env" or "given"
        # frameworks: objects built by a known call (trainer = Trainer(...)), Lightning's
        # Trainer/ModelCheckpoint writing under the working directory, argument handling that
        # rejects the platform's arguments, code that needs a launcher
        self.framework_objects: dict[str, str] = {}
        self.pretrained_sources: set[str] = set()  # X of from_pretrained(args.X)
        self.hub_literals: list[Site] = []  # from_pretrained("bert-base-uncased")
        # the string defaults of each dataclass's fields, and the classes HfArgumentParser
        # makes flags of (each field a --flag)
        self.dataclass_fields: dict[str, list[tuple[str, ast.Constant]]] = {}
        self.flag_classes: set[str] = set()
        self.lightning_root_set = False
        self.lightning_dirs: list[Site] = []
        self.rejects_arguments: list[Site] = []
        self.launcher_only: list[Site] = []
        self.in_try = 0
        self.configurator: Site | None = None  # exec(open("configurator.py").read()) at the top

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
        for sub in subnodes(node) if subs is None else subs:
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

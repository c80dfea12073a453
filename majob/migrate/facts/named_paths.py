"""Paths named before they are used (MA1xx facts): module constants (``DATA_DIR = "./data"``),
parameter defaults (``def save(path="ckpt.pt")``) and config attributes (``cfg.OUTPUT_DIR =
"./out"``). The user edits such a path where it is named, so that is where it is reported."""

from __future__ import annotations

import ast

from majob.migrate import frameworks as fw
from majob.migrate import patterns as pt
from majob.migrate.facts.nodes import subnodes
from majob.migrate.facts.records import DefaultPath, PathConstant, Scope
from majob.migrate.facts.state import FactsBase
from majob.migrate.findings import Span

# What a module constant's value gives: the literal (for a plain string), its last segment's
# text, the node the user edits, and whether uses may be routed to the channel argument.
_ConstantValue = tuple[str | None, str, ast.AST, bool]


class NamedPathFacts(FactsBase):
    """Records path constants, path defaults of parameters, and paths in config objects."""

    def _parameter_defaults(self, args: ast.arguments, scope: Scope) -> None:
        """``def save(state, filename='checkpoint.pth')``: a path the user edits in the ``def``."""
        positional = [*args.posonlyargs, *args.args]
        pairs = list(
            zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)
        )
        pairs += [
            (a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None
        ]
        for arg, default in pairs:
            if type(default) is not ast.Constant or type(default.value) is not str:
                continue
            if not pt.is_local_path_literal(default.value):
                continue
            if not (pt.path_constant_name(arg.arg) or pt.looks_like_data_file(default.value)):
                continue
            self.skip_strings.add(id(default))
            self.defaults.append(
                DefaultPath(arg.arg, self.span(default), default.value, "parameter", scope)
            )
            if scope.function is not None:
                self.default_functions.add(scope.function)

    def _config_path(self, name: str, value: ast.AST) -> None:
        """``cfg.OUTPUT_DIR = "./output"`` or ``SimpleNamespace(ROOT="datasets/coco")``: a path
        in a config object, edited where it is set (its uses read ``cfg.OUTPUT_DIR``)."""
        if (
            type(value) is not ast.Constant
            or type(value.value) is not str
            or id(value) in self.skip_strings
            or not pt.is_local_path_literal(value.value)
            or any(c in value.value for c in "^$*?[]\\(")  # a pattern (a route, a regex)
        ):
            return
        text = value.value
        path = DefaultPath(name, self.span(value), text, "config", None)
        if pt.config_path_name(name):
            self.skip_strings.add(id(value))
            self.defaults.append(path)
        elif "/" in text or pt.looks_like_file(text.rsplit("/", 1)[-1]):
            # self.config.snapshot_path = "snapshot.pt": a path if torch.save(.., <x>.snapshot_path)
            self.config_candidates.setdefault(name, (path, id(value)))

    def _find_path_constants(self, tree: ast.Module) -> None:
        """Module-level ``NAME = "path"`` constants; a name assigned twice is none. Also the
        functions with a string parameter default, whose calls the pass records wherever they
        come (a helper may be defined below its callers), and the dataclasses' string fields."""
        seen: dict[str, int] = {}
        for stmt in tree.body:
            kind = type(stmt)
            if kind is ast.FunctionDef or kind is ast.ClassDef or kind is ast.AsyncFunctionDef:
                self._string_defaults(stmt)  # type: ignore[arg-type]
            if kind is ast.ClassDef:
                self._dataclass_fields(stmt)  # type: ignore[arg-type]
            if type(stmt) is not ast.Assign:
                continue
            for target in stmt.targets:
                for sub in subnodes(target):
                    if type(sub) is ast.Name:
                        seen[sub.id] = seen.get(sub.id, 0) + 1
            only = stmt.targets[0] if len(stmt.targets) == 1 else None
            # data_url = "./data" before a configurator is the channel, not a path in the code
            if type(only) is ast.Name and only.id not in pt.CHANNEL_FLAGS.values():
                constant = self._path_constant(only.id, stmt)
                if constant is not None:
                    self.constants[constant.name] = constant
        for assigned, count in seen.items():
            if count > 1:
                self.constants.pop(assigned, None)

    def _dataclass_fields(self, stmt: ast.ClassDef) -> None:
        """``name: str = "x"`` and ``name: str = field(default="x")`` of a ``@dataclass``:
        flags when HfArgumentParser parses the class (``flag_defaults`` decides)."""
        if not any(_names_dataclass(d) for d in stmt.decorator_list):
            return
        fields = []
        for item in stmt.body:
            if type(item) is not ast.AnnAssign or type(item.target) is not ast.Name:
                continue
            value = item.value
            if type(value) is ast.Call and getattr(value.func, "id", None) == "field":
                value = next((k.value for k in value.keywords if k.arg == "default"), None)
            if type(value) is ast.Constant and type(value.value) is str:
                fields.append((item.target.id, value))
        if fields:
            self.dataclass_fields[stmt.name] = fields

    def flag_defaults(self) -> None:
        """The string fields of the dataclasses HfArgumentParser parses, as flag defaults: a
        hub model's id (MA108) or a local path named like one (MA101/MA102). Their uses read
        ``model_args.<field>``; a fix would have to reach into the parsed dataclass, so none is
        offered."""
        for cls in self.flag_classes:
            for name, value in self.dataclass_fields.get(cls, ()):
                text = str(value.value)
                if fw.hub_id(text) and fw.model_argument(name, self.pretrained_sources):
                    kind: pt.PathKind | None = "input"
                elif (
                    pt.kind_from_name(name)
                    and not name.endswith(("_name", "_id"))  # dataset_name: "glue" names one
                    and pt.is_local_path_literal(text)
                ):
                    kind = None
                else:
                    continue
                self.skip_strings.add(id(value))
                span = self.span(value)
                self.defaults.append(DefaultPath(name, span, text, "dataclass", None, kind))

    def _string_defaults(self, stmt: ast.FunctionDef | ast.ClassDef) -> None:
        """The functions and methods the file defines (and those nested one level in a
        function), and which have a string parameter default."""
        if type(stmt) is ast.ClassDef:
            self.defined_names.add(stmt.name)
            defs = stmt.body
        else:
            defs = [stmt, *stmt.body]
        for node in defs:
            if type(node) is not ast.FunctionDef and type(node) is not ast.AsyncFunctionDef:
                continue
            name = node.name
            self.defined_names.add(name)
            defaults = node.args.defaults
            if any(type(d) is ast.Constant and type(d.value) is str for d in defaults):
                self.default_functions.add(stmt.name if name == "__init__" else name)

    def _path_constant(self, name: str, stmt: ast.Assign) -> PathConstant | None:
        """``name = value`` as a path constant, if ``value`` holds a local path."""
        value = stmt.value
        line = stmt.end_lineno or stmt.lineno
        # NAME = Path("x") only: in Path("x") / "y" the Path call is the path site itself
        wrapped = pathlib_literal(value) if type(value) is ast.Call else None
        if wrapped is not None and pt.is_local_path_literal(str(wrapped.value)):
            # CKPT_DIR = Path("checkpoints"): reported at the literal; its uses keep a Path,
            # so they are not rewritten to the (str) channel argument.
            self.skip_strings.add(id(wrapped))
            span = self.span(wrapped)
            return _constant(name, line, (None, str(wrapped.value), wrapped, False), span)
        found = self._constant_value(name, value)
        return None if found is None else _constant(name, line, found, self.span(found[2]))

    def _constant_value(self, name: str, value: ast.AST) -> _ConstantValue | None:
        """A plain path string, or an ``os.path.join`` ending in a file's name (for a constant
        named like a path) or starting with a local directory."""
        if type(value) is ast.Constant and isinstance(value.value, str):
            if not pt.is_local_path_literal(value.value):
                return None
            return value.value, value.value, value, True
        if not (
            type(value) is ast.Call
            and type(value.func) is ast.Attribute
            and value.func.attr == "join"
            and value.args
        ):
            return None
        first, last = value.args[0], value.args[-1]
        named = pt.path_constant_name(name)
        if getattr(first, "attr", getattr(first, "id", None)) in pt.CHANNEL_FLAGS.values():
            return None  # folder = os.path.join(args.train_url, "ckpt"): under the channel
        if type(last) is ast.Constant and isinstance(last.value, str) and named:
            return None, last.value, value, True
        if (
            type(first) is ast.Constant
            and isinstance(first.value, str)
            and pt.is_local_path_literal(first.value)
        ):
            # data_dir = os.path.join('data', dataset): 'data' is what the user edits.
            self.skip_strings.add(id(first))
            return None, first.value, first, False
        return None


def _constant(name: str, line: int, found: _ConstantValue, span: Span) -> PathConstant:
    literal, last, _, routable = found
    base = last.rstrip("/").rsplit("/", 1)[-1]
    return PathConstant(
        name,
        line,
        literal,
        base,
        is_file=pt.looks_like_file(base),
        kind=None,
        literal_span=span,
        routable=routable,
        literal_text="" if routable else last,
    )


def pathlib_literal(node: ast.AST | None) -> ast.Constant | None:
    """The string literal in ``Path("runs")`` or ``ROOT / "runs/train"``, else None."""
    if (
        type(node) is ast.Call
        and len(node.args) == 1
        and not node.keywords
        and getattr(node.func, "id", getattr(node.func, "attr", None)) in ("Path", "PurePath")
        and type(node.args[0]) is ast.Constant
        and type(node.args[0].value) is str
    ):
        return node.args[0]
    if (
        type(node) is ast.BinOp
        and type(node.op) is ast.Div
        and type(node.right) is ast.Constant
        and type(node.right.value) is str
        and type(node.left) in (ast.Name, ast.Attribute, ast.Call)
    ):
        return node.right
    return None


def _names_dataclass(decorator: ast.expr) -> bool:
    """``@dataclass``, ``@dataclasses.dataclass``, ``@dataclass(frozen=True)``."""
    target = decorator.func if type(decorator) is ast.Call else decorator
    return getattr(target, "id", getattr(target, "attr", None)) == "dataclass"

"""How a path reaches a path position inside one file (MA1xx facts): through the expression that
builds it (``os.path.join(root, ...)``, ``"%s/x.png" % root``, ``f"{root}/x"``, ``root / "x"``),
through a local variable of the same function (``PATH = "model.pt"`` ... ``torch.save(m, PATH)``),
through an attribute set from a parameter (``self.path = path``), and through an argparse flag
whose name says nothing (``--outf``): what its uses do decides that it is a path."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts.args_flow import ArgsFlowFacts
from majob.migrate.facts.records import DefaultPath

# Calls that keep their first argument's place: a path built on it, or the same path.
_JOINS = frozenset({"join", "joinpath"})
_SAME_PATH = frozenset(
    {"Path", "PurePath", "PosixPath", "str", "abspath", "expanduser", "realpath", "normpath"}
    | {"fspath", "resolve", "absolute"}
)
_MAX_HOPS = 3  # local variables followed from one use (x = y; y = z; z = "...")


def _starts_with_separator(node: ast.AST) -> bool:
    """``"/x.pt"``, ``f"/{name}"`` or ``os.sep``: what follows a directory, not a name."""
    if type(node) is ast.JoinedStr and node.values:
        node = node.values[0]
    if type(node) is ast.Constant:
        return isinstance(node.value, str) and node.value.startswith("/")
    return type(node) is ast.Attribute and node.attr == "sep"


def path_root(node: ast.AST) -> tuple[ast.AST, bool]:
    """The expression a path is built on, and whether something is built under it:
    ``os.path.join(root, "x")`` -> (root, True); ``Path(root)`` -> (root, False)."""
    joined = False
    for _ in range(8):
        kind = type(node)
        if kind is ast.Call:
            func = node.func  # type: ignore[attr-defined]
            name = func.attr if type(func) is ast.Attribute else getattr(func, "id", "")
            args = node.args  # type: ignore[attr-defined]
            if name in _JOINS and type(func) is ast.Attribute and name == "joinpath":
                node, joined = func.value, True
            elif name in _JOINS and args:
                node, joined = args[0], True
            elif name in _SAME_PATH and args:
                node = args[0]
            elif name in _SAME_PATH and type(func) is ast.Attribute and not args:
                node = func.value  # Path(x).resolve()
            elif name == "format" and args and _formats_first(func.value, "{"):
                node, joined = args[0], True
            elif named_template(node) is not None:
                node = func.value  # FOLDER.format(epoch): a path named after the template FOLDER
            elif name == "strftime" and args:
                node = args[0]  # time.strftime(RUNS), now.strftime("runs/%Y%m%d"): the same
            else:
                return node, joined
        elif kind is ast.BinOp:
            op = type(node.op)  # type: ignore[attr-defined]
            if op is ast.Div:
                node, joined = node.left, True  # type: ignore[attr-defined]
            elif op is ast.Add:
                # root + "/x.pt" builds under root; prefix + "-" + time + ".pt" only names a
                # file (or folder: join(root + "_v2", "x")) that starts with prefix, whatever
                # is built under that name (a root written "out/" says so itself)
                joined = _starts_with_separator(node.right)  # type: ignore[attr-defined]
                node = node.left  # type: ignore[attr-defined]
            elif op is ast.Mod and _formats_first(node.left, "%"):  # type: ignore[attr-defined]
                right = node.right  # type: ignore[attr-defined]
                elements = right.elts if type(right) is ast.Tuple else [right]
                if not elements:
                    return node, joined
                node, joined = elements[0], True
            elif op is ast.Mod and type(node.left) is ast.Name:  # type: ignore[attr-defined]
                node = node.left  # type: ignore[attr-defined]  # FOLDER % epoch: the same
            else:
                return node, joined
        elif kind is ast.JoinedStr and node.values:  # type: ignore[attr-defined]
            first = node.values[0]  # type: ignore[attr-defined]
            if type(first) is not ast.FormattedValue or len(node.values) < 2:  # type: ignore[attr-defined]
                return node, joined
            node, joined = first.value, True
        else:
            return node, joined
    return node, joined


def named_template(node: ast.AST) -> ast.Name | None:
    """``FOLDER.format(epoch)``: the name of the template a formatted path is named after (its
    fields fill in a name, they are no folder the path is built under)."""
    if type(node) is not ast.Call or type(node.func) is not ast.Attribute:
        return None
    func = node.func
    if func.attr != "format" or type(func.value) is not ast.Name:
        return None
    return func.value


def _formats_first(template: ast.AST, marker: str) -> bool:
    """``"%s/x"`` or ``"{}/x"``: a format whose text starts with its first value."""
    if type(template) is not ast.Constant or type(template.value) is not str:
        return False
    text = template.value
    if marker == "%":
        return text.startswith(("%s/", "%s\\"))
    return text.startswith(("{}/", "{0}/", "{}\\"))


class FlowFacts(ArgsFlowFacts):
    """Follows paths through local variables, ``self`` attributes and flags named for nothing."""

    def _remember_local(self, name: str, value: ast.expr) -> None:
        """``name = value``: the value a later use of ``name`` in this scope stands for."""
        self.local_values[(id(self.scope), name)] = value

    def _local_value(self, node: ast.AST) -> ast.expr | None:
        if type(node) is not ast.Name:
            return None
        return self.local_values.get((id(self.scope), node.id))

    def _followed(self, arg: ast.AST, hops: int) -> tuple[ast.expr, bool] | None:
        """What a path built on a local variable is built on: its value, and whether the path
        is built under it (so the value names a directory)."""
        if hops >= _MAX_HOPS:
            return None
        root, joined = path_root(arg)
        value = self._local_value(root)
        return (value, joined) if value is not None else None

    def _self_attribute(self, attr: str, value: ast.AST) -> None:
        """``self.path = path`` in a method: ``self.path`` is that parameter wherever it is used."""
        if type(value) is ast.Name and self.scope.function is not None:
            param = self._parameter_of(value.id)
            if param is not None:
                self.self_attrs[attr] = (self.scope.function, param)

    def _parameter_of(self, name: str) -> str | None:
        """The parameter of the current function that ``name`` is, or was derived from."""
        function = self.scope.function
        if function is None:
            return None
        name = self.derived.get((id(self.scope), name), name)
        return name if name in self.function_params.get(function, ()) else None

    def _param_used(self, key: tuple[str, str], kind: pt.PathKind) -> None:
        """Parameter ``key`` reaches a path position used as ``kind`` (a write wins)."""
        if kind == "output" or key not in self.path_params:
            self.path_params[key] = kind

    def _attribute_used(self, head: ast.Attribute, kind: pt.PathKind) -> None:
        """``args.outf`` (or ``self.path``) reaches a path position used as ``kind``."""
        if (
            type(head.value) is ast.Name
            and head.value.id == "self"
            and head.attr in self.self_attrs
        ):
            self._param_used(self.self_attrs[head.attr], kind)
        if kind == "output" or head.attr not in self.attr_uses:
            self.attr_uses[head.attr] = kind

    def _settle_flag_candidates(self) -> None:
        """A flag whose name says nothing (``--outf``), or a config value or attribute
        (``self.config.snapshot_path = "snapshot.pt"``), is a path when its uses show it."""
        for dest, default in self.flag_candidates.items():
            kind = self.attr_uses.get(dest)
            if kind is not None:
                self.defaults.append(
                    DefaultPath(dest, default.span, default.value, "argument", None, kind)
                )
        for name, (value, node_id) in self.config_candidates.items():
            kind = self.attr_uses.get(name)
            if kind is not None and node_id not in self.skip_strings:
                self.skip_strings.add(node_id)
                self.defaults.append(
                    DefaultPath(name, value.span, value.value, "config", None, kind)
                )

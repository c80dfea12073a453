"""Read a YAML job spec that may be hostile: bounded in size, time and memory, and never executed.

Three steps, each refusing what a job spec never needs:

1. ``read_text``: at most ``MAX_SPEC_BYTES`` (1 MiB; stat first, then a bounded read, so a pipe or
   ``/dev/stdin`` is bounded too), UTF-8 only (a UTF-8 byte-order mark is skipped; UTF-16/32 and
   binary files are refused at the first bad byte's line:col).
2. ``compose``: ruamel.yaml builds the node graph only (no Python object is constructed, so no tag
   can run code). An alias stays a reference to its anchor's node, marked with where it is written.
3. ``to_plain``: walks the graph into plain ``dict``/``list``/scalars, recording every key's and
   value's line:col. Only the YAML 1.2 core schema's tags are accepted (``!!str !!int !!float
   !!bool !!null !!map !!seq``), plus ``!!timestamp`` (an unquoted date such as ``2024-01-01``
   resolves to it; the spec gets the text as written) and the ``<<`` merge key. Everything else
   (``!!python/...``, ``!!binary``, ``!!set``, ``!!omap``, local ``!tags``) is an error at its
   line:col. Aliases are limited as hardened loaders do (SnakeYAML, yaml.v3): at most
   ``MAX_ALIASES`` alias references and ``MAX_ALIAS_NODES`` values produced by expanding them,
   so a "billion laughs" bomb stops after a few thousand steps; an alias inside its own anchor
   (a recursive structure) is refused; nesting deeper than ``MAX_DEPTH`` is refused. At most
   ``MAX_VALUES`` keys, values and items are composed, which bounds the time a 1 MiB file of
   tiny items takes (ruamel composes in pure Python).
"""

from __future__ import annotations

import codecs
import contextlib
import math
import re
import stat
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ruamel.yaml.composer import Composer
from ruamel.yaml.error import StreamMark
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from majob.spec.positions import Loc, Positions, Where

MAX_SPEC_BYTES = 1024 * 1024
"""A job spec is a few kB; anything over 1 MiB is the wrong file (or an attack)."""
MAX_ALIASES = 100
"""Alias references (``*name``) written in one spec."""
MAX_ALIAS_NODES = 10_000
"""Values (scalars, lists, mappings) produced by expanding aliases, in total."""
MAX_DEPTH = 64
"""Nesting of lists and mappings; a job spec nests 4 levels."""
MAX_VALUES = 10_000
"""Keys, values and list items written in one spec; a job spec has a few hundred."""

_CORE = "tag:yaml.org,2002:"
_SCALAR_TAGS = {f"{_CORE}{name}" for name in ("str", "int", "float", "bool", "null", "timestamp")}
_MAP, _SEQ, _MERGE = f"{_CORE}map", f"{_CORE}seq", f"{_CORE}merge"
# What ruamel's reader refuses as "unacceptable character"; found first here to give line:col.
_NON_PRINTABLE = re.compile(
    "[^\x09\x0a\x0d\x20-\x7e\x85\xa0-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]"
)
_COMMENT = re.compile(r"(?:^|\s)#")
_BOMS = (
    (codecs.BOM_UTF32_LE, "UTF-32"),
    (codecs.BOM_UTF32_BE, "UTF-32"),
    (codecs.BOM_UTF16_LE, "UTF-16"),
    (codecs.BOM_UTF16_BE, "UTF-16"),
)


@dataclass(frozen=True)
class YamlProblem:
    """A problem at 1-based ``line:col`` (0:0: the file as a whole), inside field ``loc``."""

    line: int
    col: int
    message: str
    loc: Loc = ()


class YamlRefused(Exception):
    """The text cannot be read as a job spec at all; ``problem`` says where and why."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


# -- 1. bytes to text ------------------------------------------------------------------------


def read_text(path: Path) -> str:
    """The spec's text; ``YamlRefused`` if it is missing, too big, or not UTF-8 text."""
    try:
        info = path.stat()
        if stat.S_ISDIR(info.st_mode):
            raise YamlRefused(YamlProblem(0, 0, "is a directory, not a job spec file"))
        if stat.S_ISREG(info.st_mode) and info.st_size > MAX_SPEC_BYTES:
            size = f"the file is {info.st_size / 2**20:.1f} MiB"
            raise YamlRefused(YamlProblem(1, 1, _too_big(size)))
        # A pipe or a device has no size to stat: read one byte past the limit to find out.
        with path.open("rb") as stream:
            data = stream.read(MAX_SPEC_BYTES + 1)
    except FileNotFoundError:
        raise YamlRefused(YamlProblem(0, 0, "file not found")) from None
    except OSError as error:
        reason = error.strerror or type(error).__name__
        raise YamlRefused(YamlProblem(0, 0, f"cannot read the file: {reason}")) from None
    if len(data) > MAX_SPEC_BYTES:
        raise YamlRefused(YamlProblem(1, 1, _too_big("the input is longer")))
    return decode(data)


def _too_big(size: str) -> str:
    return (
        f"{size}: a job spec may be at most {MAX_SPEC_BYTES // 2**20} MiB (is this the right file?)"
    )


def decode(data: bytes) -> str:
    """``data`` as text: UTF-8 (a leading UTF-8 byte-order mark is dropped), printable."""
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            raise YamlRefused(
                YamlProblem(
                    1,
                    1,
                    f"not a UTF-8 text file: it starts with a {encoding} byte-order mark; "
                    "save the spec as UTF-8",
                )
            )
    data = data.removeprefix(codecs.BOM_UTF8)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line_start = data.rfind(b"\n", 0, error.start) + 1
        col = len(data[line_start : error.start].decode("utf-8")) + 1
        line = data.count(b"\n", 0, error.start) + 1
        byte = data[error.start]
        raise YamlRefused(
            YamlProblem(
                line,
                col,
                f"not a UTF-8 text file: byte 0x{byte:02X} cannot be decoded; "
                "save the spec as UTF-8",
            )
        ) from None
    bad = _NON_PRINTABLE.search(text)
    if bad is not None:
        line, col = _line_col(text, bad.start())
        code = ord(bad.group())
        if code < 0x20 or code == 0x7F:
            message = f"not a UTF-8 text file: control character U+{code:04X} (a binary file?)"
        else:
            message = f"character U+{code:04X} is not allowed in YAML; remove it"
        raise YamlRefused(YamlProblem(line, col, message))
    return text


def _line_col(text: str, index: int) -> tuple[int, int]:
    line_start = text.rfind("\n", 0, index) + 1
    return text.count("\n", 0, index) + 1, index - line_start + 1


# -- 2. text to nodes ------------------------------------------------------------------------


class AliasRef:
    """An alias (``*name``) where it is written, standing for its anchor's node."""

    __slots__ = ("mark", "name", "target")

    def __init__(self, target: Node, mark: StreamMark, name: str) -> None:
        self.target = target
        self.mark = mark
        self.name = name


class _MarkingComposer(Composer):
    """ruamel's composer, but an alias comes back as an ``AliasRef`` that knows its position.

    ruamel returns the anchor's node itself, which would lose where the alias is written and
    make a recursive anchor (``&a [*a]``) a cycle in the graph.
    """

    def __init__(self, loader: Any = None) -> None:
        super().__init__(loader=loader)
        self.warn_double_anchors = False  # re-defining an anchor is legal YAML
        self.nodes = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        # Composing is pure Python and slow (~30k values a second): stop a huge document early.
        self.nodes += 1
        if self.nodes > MAX_VALUES:
            mark = self.parser.peek_event().start_mark
            message = f"more than {MAX_VALUES} keys and values; a job spec has far fewer"
            raise YamlRefused(YamlProblem(mark.line + 1, mark.column + 1, message))
        if self.parser.check_event(AliasEvent):
            event = self.parser.peek_event()
            target = super().compose_node(parent, index)
            return AliasRef(target, event.start_mark, str(event.anchor))
        return super().compose_node(parent, index)


@dataclass(frozen=True)
class Document:
    """A composed YAML document: its root node, and whether it said ``%YAML 1.1``."""

    root: Node
    yaml_1_1: bool = False


def compose(text: str) -> Document | None:
    """The node graph of the single YAML document in ``text`` (``None`` if it is empty).

    Raises ruamel's ``YAMLError`` subclasses for syntax errors.
    """
    from ruamel.yaml import YAML

    # The safe loader's scanner and parser: the round-trip ones also collect comments, which a
    # spec does not need and which is where ruamel's odd-input bugs live.
    yaml = YAML(typ="safe", pure=True)
    yaml.Composer = _MarkingComposer
    yaml.max_depth = MAX_DEPTH
    node = yaml.compose(text)
    if not isinstance(node, Node):  # empty; an alias cannot be the root: it needs an anchor
        return None
    return Document(node, tuple(yaml.resolver.processing_version) == (1, 1))


# -- 3. nodes to plain values ----------------------------------------------------------------


class _Stop(Exception):
    """A limit was hit: stop walking (the graph may be a bomb)."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def to_plain(document: Document, positions: Positions, text: str) -> tuple[Any, list[YamlProblem]]:
    """The document as plain values, with every key's and item's position recorded in
    ``positions``; and the problems found (bad tags, bad values, duplicate keys, alias limits)."""
    walker = _Walker(positions, text, document.yaml_1_1)
    try:
        value = walker.value(document.root, (), 0)
    except _Stop as stop:
        return None, [stop.problem]
    return value, walker.problems


def display_tag(tag: str) -> str:
    """``tag:yaml.org,2002:binary`` as written: ``!!binary``."""
    if tag.startswith(_CORE):
        return "!!" + tag.removeprefix(_CORE)
    return tag if tag.startswith("!") else f"!<{tag}>"


Pair = tuple["Node | AliasRef", "Node | AliasRef", "StreamMark | None", bool]
"""A mapping entry: key, value, the alias it came through (if any), merged by ``<<``?"""


class _Walker:
    """One walk over a document's nodes; ``value`` is the entry point."""

    def __init__(self, positions: Positions, text: str, yaml_1_1: bool) -> None:
        self.positions = positions
        self.text = text
        self.yaml_1_1 = yaml_1_1
        self.problems: list[YamlProblem] = []
        self.aliases = 0
        self.expanded = 0
        self.alias_mark: StreamMark | None = None  # the outermost alias being expanded
        self.alias_loc: Loc = ()  # and the field it stands in
        self.open: set[int] = set()  # collection nodes being walked: an alias to one is a cycle

    # Positions ---------------------------------------------------------------------------

    def where(self, node: Node | AliasRef) -> tuple[int, int]:
        """1-based line:col of ``node``; an empty value is placed at the ``:`` or ``-`` before it.

        ruamel marks an empty value at the next token, often the next line's key, which would
        blame the wrong line (``lr:`` followed by ``batch: 3``).
        """
        mark = node.mark if isinstance(node, AliasRef) else node.start_mark
        if (
            isinstance(node, ScalarNode)
            and node.value == ""
            and node.style is None
            and node.start_mark.index == node.end_mark.index
        ):
            return self.indicator_before(mark.index)
        return mark.line + 1, mark.column + 1

    def indicator_before(self, index: int) -> tuple[int, int]:
        """Position of the last character before ``index`` that is not blank or a comment."""
        end = index
        while end > 0:
            start = self.text.rfind("\n", 0, end - 1) + 1
            code = _COMMENT.split(self.text[start:end], maxsplit=1)[0].rstrip()
            if code:
                return _line_col(self.text, start + len(code) - 1)
            end = start
        return 1, 1

    # Limits ------------------------------------------------------------------------------

    def stop(self, mark: StreamMark, loc: Loc, message: str) -> _Stop:
        return _Stop(YamlProblem(mark.line + 1, mark.column + 1, message, loc))

    def follow(self, ref: AliasRef, loc: Loc, via: StreamMark | None = None) -> Node:
        """The node ``ref`` stands for, after counting it against the alias limits."""
        if self.alias_mark is None and via is None:  # written in the file, not an expansion
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                raise self.stop(
                    ref.mark,
                    loc,
                    f"more than {MAX_ALIASES} aliases; a job spec needs far fewer: write the "
                    "values out",
                )
        if id(ref.target) in self.open:
            raise self.stop(
                ref.mark,
                loc,
                f"alias *{ref.name} is inside its own anchor &{ref.name}: a job spec cannot be "
                "recursive",
            )
        return ref.target

    def count(self, loc: Loc, via: StreamMark | None = None) -> None:
        """Count one value produced by an alias; stop past ``MAX_ALIAS_NODES``."""
        mark = self.alias_mark or via
        if mark is None:
            return
        self.expanded += 1
        if self.expanded > MAX_ALIAS_NODES:
            raise self.stop(
                mark,
                self.alias_loc if self.alias_mark else loc,
                f"aliases expand to more than {MAX_ALIAS_NODES} values (an alias bomb?); "
                "write the values out",
            )

    @contextlib.contextmanager
    def expanding(self, mark: StreamMark | None, loc: Loc) -> Iterator[None]:
        """Values built inside count as expanded through the alias at ``mark``, in ``loc``."""
        if self.alias_mark is not None or mark is None:
            yield
            return
        self.alias_mark, self.alias_loc = mark, loc
        try:
            yield
        finally:
            self.alias_mark, self.alias_loc = None, ()

    # Values ------------------------------------------------------------------------------

    def value(self, node: Node | AliasRef, loc: Loc, depth: int) -> Any:
        if isinstance(node, AliasRef):
            target = self.follow(node, loc)
            with self.expanding(node.mark, loc):
                return self.value(target, loc, depth)
        self.count(loc)
        if depth > MAX_DEPTH:
            raise self.stop(node.start_mark, loc, f"nested more than {MAX_DEPTH} levels deep")
        tag = str(node.tag)
        if isinstance(node, MappingNode) and tag == _MAP:
            return self.mapping(node, loc, depth)
        if isinstance(node, SequenceNode) and tag == _SEQ:
            return self.sequence(node, loc, depth)
        if isinstance(node, ScalarNode) and (tag in _SCALAR_TAGS or tag == _MERGE):
            try:
                return _scalar_value(tag, str(node.value), self.yaml_1_1)
            except ValueError:
                message = f"{node.value!r} is not a valid {display_tag(tag)}"
        else:
            message = (
                f"tag {display_tag(tag)} is not allowed; a job spec takes plain strings, numbers, "
                "booleans, lists and mappings"
            )
        self.problems.append(YamlProblem(*self.where(node), message, loc))
        return None

    def sequence(self, node: SequenceNode, loc: Loc, depth: int) -> list[Any]:
        self.open.add(id(node))
        items: list[Any] = []
        for index, item in enumerate(node.value):
            child = (*loc, index)
            at = self.where(item)
            self.positions.set(child, Where(self.positions.file, at, at))
            items.append(self.value(item, child, depth + 1))
        self.open.discard(id(node))
        return items

    def mapping(self, node: MappingNode, loc: Loc, depth: int) -> dict[Any, Any]:
        self.open.add(id(node))
        out: dict[Any, Any] = {}
        first_line: dict[Any, int] = {}
        for key_node, value_node, via, merged in self.pairs(node, loc, None):
            with self.expanding(via, loc):
                key_at = self.where(key_node)
                key_target = (
                    self.follow(key_node, loc) if isinstance(key_node, AliasRef) else key_node
                )
                if not isinstance(key_target, ScalarNode):
                    message = "a key must be a single value, not a list or a mapping"
                    self.problems.append(YamlProblem(*key_at, message, loc))
                    continue
                key = self.value(key_target, loc, depth + 1)
                child = (*loc, key if isinstance(key, (str, int)) else str(key))
                if key in first_line:
                    if not merged:  # a key of the mapping's own overrides a merged one silently
                        self.problems.append(
                            YamlProblem(
                                *key_at,
                                f"key {key!r} is written twice (first at line "
                                f"{first_line[key]}); keep one",
                                child,
                            )
                        )
                    continue
                first_line[key] = key_at[0]
                where = Where(self.positions.file, key_at, self.where(value_node))
                self.positions.set(child, where)
                out[key] = self.value(value_node, child, depth + 1)
        self.open.discard(id(node))
        return out

    def pairs(self, node: MappingNode, loc: Loc, via: StreamMark | None) -> list[Pair]:
        """The mapping's own entries, then those merged in by ``<<`` (the first one wins)."""
        own: list[Pair] = []
        merged: list[Pair] = []
        for key_node, value_node in node.value:
            if not (isinstance(key_node, ScalarNode) and str(key_node.tag) == _MERGE):
                own.append((key_node, value_node, via, False))
                continue
            for source, source_via in self.merge_sources(value_node, loc, via):
                self.open.add(id(source))
                for key, value, _, _ in self.pairs(source, loc, source_via):
                    self.count(loc, source_via)
                    merged.append((key, value, source_via, True))
                self.open.discard(id(source))
        return own + merged

    def merge_sources(
        self, node: Node | AliasRef, loc: Loc, via: StreamMark | None
    ) -> list[tuple[MappingNode, StreamMark | None]]:
        """The mappings a ``<<`` value names (a mapping, an alias, or a list of those)."""
        if isinstance(node, AliasRef):
            target = self.follow(node, loc, via)  # counted as written when ``via`` is None
            via = via or node.mark
            node = target
        items = node.value if isinstance(node, SequenceNode) else [node]
        sources: list[tuple[MappingNode, StreamMark | None]] = []
        for item in items:
            item_via = via or (item.mark if isinstance(item, AliasRef) else None)
            target = self.follow(item, loc, via) if isinstance(item, AliasRef) else item
            if isinstance(target, MappingNode) and str(target.tag) == _MAP:
                sources.append((target, item_via))
            else:
                message = "a merge key (<<) takes a mapping, or a list of mappings"
                self.problems.append(YamlProblem(*self.where(item), message, loc))
        return sources


_BOOLS = {
    **dict.fromkeys(("true", "yes", "y", "on"), True),  # the last three: YAML 1.1 only
    **dict.fromkeys(("false", "no", "n", "off"), False),
}
_INT = re.compile(r"[-+]?(?:0b[01]+|0o[0-7]+|0x[0-9a-f]+|[0-9]+)")
_SEXAGESIMAL = re.compile(r"[-+]?[0-9]+(?::[0-5]?[0-9])+(?:\.[0-9]*)?")  # YAML 1.1: 1:30 is 90


def _scalar_value(tag: str, text: str, yaml_1_1: bool = False) -> Any:
    """The plain value of a core-schema scalar; ``ValueError`` if ``text`` does not fit ``tag``."""
    kind = tag.removeprefix(_CORE)
    lowered = text.lower().replace("_", "") if kind in ("int", "float") else text.lower()
    if kind == "null":
        if lowered not in ("", "~", "null"):
            raise ValueError(text)
        return None
    if kind == "bool":
        if lowered not in _BOOLS:
            raise ValueError(text)
        return _BOOLS[lowered]
    if kind in ("int", "float") and yaml_1_1 and _SEXAGESIMAL.fullmatch(lowered):
        sign = -1 if lowered.startswith("-") else 1
        value: float = 0
        for part in lowered.lstrip("+-").split(":"):
            value = value * 60 + (float(part) if "." in part else int(part))
        return sign * value
    if kind == "int":
        if not _INT.fullmatch(lowered):
            raise ValueError(text)
        sign = -1 if lowered.startswith("-") else 1
        digits = lowered.lstrip("+-")
        base = {"0b": 2, "0o": 8, "0x": 16}.get(digits[:2], 10)
        if base != 10:
            digits = digits[2:]
        elif yaml_1_1 and len(digits) > 1 and digits.startswith("0"):
            base = 8  # YAML 1.1: 017 is octal
        return sign * int(digits, base)
    if kind == "float":
        special = {".inf": math.inf, "+.inf": math.inf, "-.inf": -math.inf, ".nan": math.nan}
        if lowered in special:
            return special[lowered]
        if not re.fullmatch(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:e[-+]?[0-9]+)?", lowered):
            raise ValueError(text)
        return float(lowered)
    # str, timestamp (kept as written) and a "<<" used as a plain value
    return text


__all__ = [
    "MAX_ALIASES",
    "MAX_ALIAS_NODES",
    "MAX_DEPTH",
    "MAX_SPEC_BYTES",
    "MAX_VALUES",
    "AliasRef",
    "Document",
    "YamlProblem",
    "YamlRefused",
    "compose",
    "decode",
    "display_tag",
    "read_text",
    "to_plain",
]

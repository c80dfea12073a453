"""The third step of reading a spec that may be hostile: its YAML nodes as plain values.

``to_plain`` walks the node graph into plain ``dict``/``list``/scalars, recording every key's and
value's line:col. Only the YAML 1.2 core schema's tags are accepted (``!!str !!int !!float !!bool
!!null !!map !!seq``), plus ``!!timestamp`` (an unquoted date such as ``2024-01-01`` resolves to
it; the spec gets the text as written) and the ``<<`` merge key. A scalar's value is what
ruamel's safe constructor makes of it, called for those four tags alone (never its
``construct_object``, which would follow any tag); an explicit tag must be written as ruamel's
resolver reads that type untagged (``!!int 7``, not ``!!int many``). Everything else
(``!!python/...``, ``!!binary``, ``!!set``, ``!!omap``, local ``!tags``) is an error at its
line:col. Aliases are limited as hardened loaders do (SnakeYAML, yaml.v3): at most
``MAX_ALIASES`` alias references and ``MAX_ALIAS_NODES`` values produced by expanding them, so a
"billion laughs" bomb stops after a few thousand steps; an alias inside its own anchor (a
recursive structure) is refused, and so is nesting deeper than ``MAX_DEPTH`` through aliases.
A key written twice is an error at the second.
"""

from __future__ import annotations

import contextlib
import re
import warnings
from collections.abc import Iterator
from typing import Any

from ruamel.yaml.error import MantissaNoDotYAML1_1Warning, StreamMark
from ruamel.yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode

from majob.spec.positions import Loc, Positions, Where
from majob.spec.yaml_nodes import MAX_DEPTH, AliasRef, Document
from majob.spec.yaml_text import YamlProblem, line_col

MAX_ALIASES = 100
"""Alias references (``*name``) written in one spec."""
MAX_ALIAS_NODES = 10_000
"""Values (scalars, lists, mappings) produced by expanding aliases, in total."""

_CORE = "tag:yaml.org,2002:"
_MAP, _SEQ, _MERGE = (f"{_CORE}{name}" for name in ("map", "seq", "merge"))
_INT, _FLOAT = f"{_CORE}int", f"{_CORE}float"
# The core schema's scalar tags and the safe constructor's method for each; the others a spec
# takes (str, timestamp, a "<<" used as a plain value) keep the text as written.
_CONSTRUCTORS = {
    f"{_CORE}{name}": f"construct_yaml_{name}" for name in ("null", "bool", "int", "float")
}
_TEXT_TAGS = {f"{_CORE}{name}" for name in ("str", "timestamp", "merge")}
_COMMENT = re.compile(r"(?:^|\s)#")


class _Stop(Exception):
    """A limit was hit: stop walking (the graph may be a bomb)."""

    def __init__(self, problem: YamlProblem) -> None:
        super().__init__(problem.message)
        self.problem = problem


def to_plain(document: Document, positions: Positions, text: str) -> tuple[Any, list[YamlProblem]]:
    """The document as plain values, with every key's and item's position recorded in
    ``positions``; and the problems found (bad tags, bad values, duplicate keys, alias limits)."""
    walker = _Walker(document, positions, text)
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

    def __init__(self, document: Document, positions: Positions, text: str) -> None:
        # The loader that composed the document: its resolver and safe constructor know the
        # document's YAML version (``%YAML 1.1`` or the default 1.2).
        self.resolver = document.loader.resolver
        self.constructor = document.loader.constructor
        self.positions = positions
        self.text = text
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
                return line_col(self.text, start + len(code) - 1)
            end = start
        return 1, 1

    def problem(self, node: Node | AliasRef, message: str, loc: Loc) -> None:
        self.problems.append(YamlProblem(*self.where(node), message, loc))

    # Limits ------------------------------------------------------------------------------

    def stop(self, mark: StreamMark, loc: Loc, message: str) -> _Stop:
        return _Stop(YamlProblem(mark.line + 1, mark.column + 1, message, loc))

    def follow(self, ref: AliasRef, loc: Loc, via: StreamMark | None = None) -> Node:
        """The node ``ref`` stands for, after counting it against the alias limits."""
        if self.alias_mark is None and via is None:  # written in the file, not an expansion
            self.aliases += 1
            if self.aliases > MAX_ALIASES:
                message = f"more than {MAX_ALIASES} aliases; a job spec needs far fewer"
                raise self.stop(ref.mark, loc, f"{message}: write the values out")
        if id(ref.target) in self.open:
            message = f"alias *{ref.name} is inside its own anchor &{ref.name}"
            raise self.stop(ref.mark, loc, f"{message}: a job spec cannot be recursive")
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
        if isinstance(node, ScalarNode) and (tag in _CONSTRUCTORS or tag in _TEXT_TAGS):
            try:
                return self.scalar(node, tag)
            except ValueError:
                message = f"{node.value!r} is not a valid {display_tag(tag)}"
        else:
            message = (
                f"tag {display_tag(tag)} is not allowed; a job spec takes plain strings, numbers, "
                "booleans, lists and mappings"
            )
        self.problem(node, message, loc)
        return None

    def scalar(self, node: ScalarNode, tag: str) -> Any:
        """ruamel's value of ``node`` as ``tag``; ``ValueError`` if its text does not fit it."""
        if tag in _TEXT_TAGS:
            return str(node.value)
        # An explicit tag needs the text its type has untagged (an integer's also makes a float).
        implicit = str(self.resolver.resolve(ScalarNode, node.value, (True, False)))
        if implicit != tag and (tag, implicit) != (_FLOAT, _INT):
            raise ValueError(node.value)
        construct = getattr(self.constructor, _CONSTRUCTORS[tag])
        try:
            if tag != _FLOAT:
                return construct(node)
            with warnings.catch_warnings():
                # ruamel warns of a YAML 1.1 float without a dot (1e3) but reads it right.
                warnings.simplefilter("ignore", MantissaNoDotYAML1_1Warning)
                return construct(node)
        except (IndexError, ValueError):  # "_" reads as an integer with no digits
            raise ValueError(node.value) from None

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
                    self.problem(key_node, message, loc)
                    continue
                key = self.value(key_target, loc, depth + 1)
                child = (*loc, key if isinstance(key, (str, int)) else str(key))
                if key in first_line:
                    if not merged:  # a key of the mapping's own overrides a merged one silently
                        first = f"first at line {first_line[key]}"
                        message = f"key {key!r} is written twice ({first}); keep one"
                        self.problem(key_node, message, child)
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
                self.problem(item, message, loc)
        return sources


__all__ = ["MAX_ALIASES", "MAX_ALIAS_NODES", "display_tag", "to_plain"]

"""The second step of reading a spec that may be hostile: its text as a graph of YAML nodes.

ruamel.yaml's safe loader scans, parses and composes; its resolver gives each plain scalar its
implicit tag (YAML 1.2, or 1.1 when the document says ``%YAML 1.1``). No Python object is
constructed, so no tag can run code. An alias stays a reference to its anchor's node, marked with
where it is written. At most ``MAX_VALUES`` keys, values and items are composed, which bounds the
time a 1 MiB file of tiny items takes (ruamel composes in pure Python), and nesting deeper than
``MAX_DEPTH`` is refused.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ruamel.yaml.composer import Composer, MaxDepthExceededError
from ruamel.yaml.error import MarkedYAMLError, StreamMark, YAMLError
from ruamel.yaml.events import AliasEvent
from ruamel.yaml.nodes import Node

from majob.spec.yaml_text import YamlProblem, YamlRefused

MAX_DEPTH = 64
"""Nesting of lists and mappings; a job spec nests 4 levels."""
MAX_VALUES = 10_000
"""Keys, values and list items written in one spec; a job spec has a few hundred."""


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
    """A composed YAML document: its root node, and the loader that read it.

    The loader's resolver knows the document's YAML version (``%YAML 1.1`` or the default 1.2),
    and its safe constructor turns a scalar into its value by that version's rules.
    """

    root: Node
    loader: Any


def compose(text: str) -> Document | None:
    """The node graph of the single YAML document in ``text`` (``None`` if it is empty); a
    ``YamlRefused`` at its line:col for a syntax error, too many values or too deep a nesting."""
    from ruamel.yaml import YAML

    # The safe loader's scanner and parser: the round-trip ones also collect comments, which a
    # spec does not need and which is where ruamel's odd-input bugs live.
    yaml = YAML(typ="safe", pure=True)
    yaml.Composer = _MarkingComposer
    yaml.max_depth = MAX_DEPTH
    try:
        node = yaml.compose(text)
    except MaxDepthExceededError as error:
        mark = error.problem_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        message = f"nested more than {MAX_DEPTH} levels deep"
        raise YamlRefused(YamlProblem(line, col, message)) from None
    except MarkedYAMLError as error:
        mark = error.problem_mark or error.context_mark
        line, col = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        reason = " ".join(str(error.problem or error.context or "invalid YAML").split())
        if error.context and error.problem and error.context not in reason:
            reason = f"{' '.join(str(error.context).split())}: {reason}"
        raise YamlRefused(YamlProblem(line, col, f"YAML syntax error: {reason}")) from None
    except YAMLError as error:
        reason = " ".join(str(error).split())
        raise YamlRefused(YamlProblem(1, 1, f"YAML error: {reason}")) from None
    if not isinstance(node, Node):  # empty; an alias cannot be the root: it needs an anchor
        return None
    return Document(node, yaml)


__all__ = ["MAX_DEPTH", "MAX_VALUES", "AliasRef", "Document", "compose"]

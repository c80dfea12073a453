"""The walk of the single pass: every node once, each handed to the handler for its exact type.

``FileFacts`` fills ``handlers``; a node without one is walked through to its children. The walk
is most of what a check costs, so it is written for speed: it skips the fields that never hold a
node, and dispatches by a dictionary lookup on the node's exact type.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from majob.migrate.facts.nodes import CHILD_FIELDS, NODE_TYPES, fields_of
from majob.migrate.facts.state import FactsBase

_STMT_TYPES = frozenset(ast.stmt.__subclasses__())


class TreeWalk(FactsBase):
    """Visits nodes, keeping ``stmt`` (the statement being walked) up to date."""

    # One table for every instance, looked up by the node's exact type: a per-instance table of
    # bound methods would make each FileFacts a reference cycle (see checker: no cycle collection).
    handlers: ClassVar[Mapping[type, Callable[[Any, Any], None]]] = {}

    def visit(self, node: ast.AST) -> None:
        kind = type(node)
        if kind in _STMT_TYPES:
            self.stmt = node  # type: ignore[assignment]
        handler = self.handlers.get(kind)
        if handler is None:
            self.children(node)
        else:
            handler(self, node)

    def children(self, node: ast.AST) -> None:
        # visit() inlined: this loop runs for most of the ~6 nodes per source line.
        handlers = self.handlers
        fields = CHILD_FIELDS.get(type(node))
        if fields is None:
            fields = fields_of(type(node))
        for name in fields:
            value = getattr(node, name, None)
            if value is None:
                continue
            if type(value) is list:  # a body or a list of expressions: statements only here
                for item in value:
                    child = type(item)
                    if child in _STMT_TYPES:
                        self.stmt = item
                    handler = handlers.get(child)
                    if handler is not None:
                        handler(self, item)
                    elif child in NODE_TYPES:
                        self.children(item)
            else:
                child = type(value)
                handler = handlers.get(child)
                if handler is not None:
                    handler(self, value)
                elif child in NODE_TYPES:
                    self.children(value)

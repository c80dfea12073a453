"""Read a YAML job spec that may be hostile: bounded in size, time and memory, and never executed.

Three steps, each refusing what a job spec never needs, each in its own module:

1. ``read_text`` (``yaml_text``): at most ``MAX_SPEC_BYTES`` (1 MiB, a pipe included), UTF-8
   text only, every problem at the first bad byte's line:col.
2. ``compose`` (``yaml_nodes``): ruamel.yaml's safe loader composes the node graph and its
   resolver types each plain scalar; nothing is constructed. Aliases stay references marked with
   where they are written; at most ``MAX_VALUES`` values, nested at most ``MAX_DEPTH`` deep.
3. ``to_plain`` (``yaml_values``): the graph as plain values with every line:col recorded; the
   core schema's tags only (plus ``!!timestamp`` as text and the ``<<`` merge key), each scalar
   made by ruamel's safe constructor; at most ``MAX_ALIASES`` aliases expanding to at most
   ``MAX_ALIAS_NODES`` values, no alias inside its own anchor, no key written twice.

The README's "A spec is read as untrusted input" lists these guarantees for users.
"""

from __future__ import annotations

from majob.spec.yaml_nodes import MAX_DEPTH, MAX_VALUES, AliasRef, Document, compose
from majob.spec.yaml_text import MAX_SPEC_BYTES, YamlProblem, YamlRefused, decode, read_text
from majob.spec.yaml_values import MAX_ALIAS_NODES, MAX_ALIASES, display_tag, to_plain

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

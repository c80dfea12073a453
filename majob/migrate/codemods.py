"""The libcst side of ``majob migrate``: apply the fixes the checker planned, keeping formatting.

This is the only module that imports libcst, and only ``splice`` imports it, for the top-level
statements whose fixes are more than text edits. Every fix is anchored at the source span the
checker saw (``ast`` and libcst agree on spans that exclude parentheses), so the codemods hold no
analysis of their own.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from majob.errors import MigrationError
from majob.migrate.findings import Fix

_EXPR_ACTIONS = frozenset(
    {
        "replace-expr",
        "replace-string",
        "rename-attr",
        "parse-known-args",
        "set-kwarg",
        "replace-module",
    }
)
_STMT_ACTIONS = frozenset({"insert-before", "insert-after", "replace-stmt", "wrap-stmt"})
_NO_SPACE = cst.SimpleWhitespace("")
_SPACE = cst.SimpleWhitespace(" ")

Key = tuple[int, int, int, int]


def _statements(code: str) -> list[cst.BaseStatement]:
    return list(cst.parse_module(code).body)


class _ApplyFixes(cst.CSTTransformer):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, fixes: Sequence[Fix]) -> None:
        super().__init__()
        self.by_span: dict[Key, list[Fix]] = defaultdict(list)
        self.stmt_fixes: list[Fix] = []
        self.body_fixes: dict[tuple[int, int], list[Fix]] = defaultdict(list)
        self.top: list[Fix] = []
        self.function_fixes: dict[int, list[Fix]] = defaultdict(list)
        self.applied: set[int] = set()
        for fix in fixes:
            s = fix.span
            if fix.action in _EXPR_ACTIONS:
                self.by_span[(s.line, s.col, s.end_line, s.end_col)].append(fix)
            elif fix.action in _STMT_ACTIONS:
                self.stmt_fixes.append(fix)
            elif fix.action == "prepend-body":
                self.body_fixes[(s.line, s.col)].append(fix)
            elif fix.action == "prepend-function":
                self.function_fixes[s.line].append(fix)
            elif fix.action == "insert-top":
                self.top.append(fix)
            else:
                raise MigrationError(f"unknown fix action {fix.action!r} (rule {fix.rule})")
        self.fixes = list(fixes)
        # Lines any fix touches, sorted: subtrees elsewhere are not walked (see on_visit).
        self.lines = sorted({n for f in fixes for n in range(f.span.line, f.span.end_line + 1)})

    def _range(self, node: cst.CSTNode) -> CodeRange | None:
        return self.get_metadata(PositionProvider, node, None)

    def _mark(self, fix: Fix) -> None:
        self.applied.add(id(fix))

    def _new_statements(self, fixes: Sequence[Fix]) -> list[cst.BaseStatement]:
        """The statements ``fixes`` add, in order; each fix is marked applied."""
        new: list[cst.BaseStatement] = []
        for fix in fixes:
            new.extend(_statements(fix.code))
            self._mark(fix)
        return new

    def on_visit(self, node: cst.CSTNode) -> bool:
        descend = super().on_visit(node)
        where = self._range(node)
        if where is None or isinstance(node, cst.Module):
            return descend
        index = bisect.bisect_left(self.lines, where.start.line)
        return descend and index < len(self.lines) and self.lines[index] <= where.end.line

    # ------------------------------------------------------------------ expressions

    def on_leave(  # type: ignore[override]
        self, original_node: cst.CSTNode, updated_node: cst.CSTNode
    ) -> cst.CSTNode | cst.RemovalSentinel | cst.FlattenSentinel[cst.CSTNode]:
        left = super().on_leave(original_node, updated_node)
        if not self.by_span or not isinstance(left, cst.CSTNode):
            return left
        result: cst.CSTNode = left
        where = self._range(original_node)
        if where is None:
            return result
        key = (where.start.line, where.start.column, where.end.line, where.end.column)
        for fix in self.by_span.get(key, ()):
            changed = self._apply_expr(fix, result)
            if changed is not None:
                result = changed
                self._mark(fix)
        return result

    def _apply_expr(self, fix: Fix, node: cst.CSTNode) -> cst.CSTNode | None:
        action = fix.action
        if action == "replace-expr" and isinstance(node, cst.BaseExpression):
            new = cst.parse_expression(fix.code)
            return new.with_changes(lpar=node.lpar, rpar=node.rpar)
        if action == "replace-string":
            if isinstance(node, cst.SimpleString) and fix.old in node.value:
                return node.with_changes(value=node.value.replace(fix.old, fix.new, 1))
            if isinstance(node, cst.FormattedString) and node.parts:
                first = node.parts[0]
                if isinstance(first, cst.FormattedStringText) and first.value.startswith(fix.old):
                    text = first.with_changes(value=fix.new + first.value[len(fix.old) :])
                    return node.with_changes(parts=[text, *node.parts[1:]])
            return None
        if action == "rename-attr" and isinstance(node, cst.Attribute):
            return node.with_changes(attr=cst.Name(fix.code))
        if action == "parse-known-args" and isinstance(node, cst.Call):
            if not isinstance(node.func, cst.Attribute):
                return None
            call = node.with_changes(func=node.func.with_changes(attr=cst.Name("parse_known_args")))
            if fix.name == "tuple":
                return call  # the assignment's target becomes a tuple in leave_Assign
            index = cst.SubscriptElement(cst.Index(cst.Integer("0")))
            return cst.Subscript(call, [index])
        if action == "set-kwarg" and isinstance(node, cst.Call):
            return self._set_kwarg(node, fix.name, cst.parse_expression(fix.code))
        if action == "replace-module" and isinstance(node, cst.ImportFrom):
            module = cst.parse_expression(fix.code)
            if isinstance(module, cst.Attribute | cst.Name):
                return node.with_changes(module=module)
        return None

    @staticmethod
    def _set_kwarg(call: cst.Call, name: str, value: cst.BaseExpression) -> cst.Call:
        args = list(call.args)
        for i, arg in enumerate(args):
            if arg.keyword is not None and arg.keyword.value == name:
                args[i] = arg.with_changes(value=value)
                return call.with_changes(args=args)
        equal = cst.AssignEqual(whitespace_before=_NO_SPACE, whitespace_after=_NO_SPACE)
        new = cst.Arg(value=value, keyword=cst.Name(name), equal=equal)
        if args:
            last = args[-1]
            if isinstance(last.comma, cst.Comma):
                # A trailing comma (often a multi-line call): the new argument takes it over, and
                # the old last argument takes the separator used between the arguments before it.
                new = new.with_changes(comma=last.comma)
                if len(args) > 1 and isinstance(args[-2].comma, cst.Comma):
                    args[-1] = last.with_changes(comma=args[-2].comma)
            else:
                args[-1] = last.with_changes(comma=cst.Comma(whitespace_after=_SPACE))
        args.append(new)
        return call.with_changes(args=args)

    def leave_Assign(self, original_node: cst.Assign, updated_node: cst.Assign) -> cst.Assign:
        where = self._range(original_node.value)
        if where is None or len(updated_node.targets) != 1:
            return updated_node
        key = (where.start.line, where.start.column, where.end.line, where.end.column)
        if not any(
            f.action == "parse-known-args" and f.name == "tuple" for f in self.by_span.get(key, ())
        ):
            return updated_node
        target = updated_node.targets[0]
        tuple_target = cst.Tuple(
            [
                cst.Element(target.target, comma=cst.Comma(whitespace_after=_SPACE)),
                cst.Element(cst.Name("_unknown")),
            ],
            lpar=[],
            rpar=[],
        )
        return updated_node.with_changes(targets=[target.with_changes(target=tuple_target)])

    # ------------------------------------------------------------------ statements

    def leave_SimpleStatementLine(
        self, original_node: cst.SimpleStatementLine, updated_node: cst.SimpleStatementLine
    ) -> cst.BaseStatement | cst.FlattenSentinel[cst.BaseStatement]:
        if not self.stmt_fixes:
            return updated_node
        where = self._range(original_node)
        if where is None:
            return updated_node
        mine = [
            f
            for f in self.stmt_fixes
            if where.start.line <= f.span.line <= where.end.line and id(f) not in self.applied
        ]
        if not mine:
            return updated_node
        before: list[cst.BaseStatement] = []
        after: list[cst.BaseStatement] = []
        current: list[cst.BaseStatement] = [updated_node]
        for fix in mine:
            if fix.action == "insert-before":
                before.extend(_statements(fix.code))
            elif fix.action == "insert-after":
                after.extend(_statements(fix.code))
            elif fix.action == "replace-stmt":
                current = _statements(fix.code)
            elif fix.action == "wrap-stmt":
                body = [s.with_changes(leading_lines=()) for s in current]
                current = [
                    cst.If(test=cst.parse_expression(fix.code), body=cst.IndentedBlock(body))
                ]
            self._mark(fix)
        statements = [
            s.with_changes(leading_lines=()) if s is updated_node else s
            for s in [*before, *current, *after]
        ]
        # Comments above the original line stay above whatever now comes first.
        statements[0] = statements[0].with_changes(leading_lines=updated_node.leading_lines)
        return cst.FlattenSentinel(statements)

    def _prepend(self, original: cst.CSTNode, updated: cst.For | cst.While) -> cst.For | cst.While:
        where = self._range(original)
        if where is None:
            return updated
        fixes = self.body_fixes.get((where.start.line, where.start.column), [])
        if not fixes or not isinstance(updated.body, cst.IndentedBlock):
            return updated
        new = self._new_statements(fixes)
        body = updated.body.with_changes(body=[*new, *updated.body.body])
        return updated.with_changes(body=body)

    def leave_For(
        self, original_node: cst.For, updated_node: cst.For
    ) -> cst.For | cst.FlattenSentinel[cst.BaseStatement]:
        result = self._prepend(original_node, updated_node)
        assert isinstance(result, cst.For)
        where = self._range(original_node)
        line = where.start.line if where else -1
        before = [f for f in self.stmt_fixes if f.action == "insert-before" and f.span.line == line]
        if not before:
            return result
        new = self._new_statements(before)  # statements before the loop (the resume block)
        new[0] = new[0].with_changes(leading_lines=result.leading_lines)
        return cst.FlattenSentinel([*new, result.with_changes(leading_lines=())])

    def leave_FunctionDef(
        self, original_node: cst.FunctionDef, updated_node: cst.FunctionDef
    ) -> cst.FunctionDef:
        where = self._range(original_node.name)
        fixes = self.function_fixes.get(where.start.line, []) if where else []
        if not fixes or not isinstance(updated_node.body, cst.IndentedBlock):
            return updated_node
        new = self._new_statements(fixes)
        body = list(updated_node.body.body)
        index = 1 if body and _is_preamble(body[0], first=True) else 0  # after the docstring
        block = updated_node.body.with_changes(body=[*body[:index], *new, *body[index:]])
        return updated_node.with_changes(body=block)

    def leave_Module(self, original_node: cst.Module, updated_node: cst.Module) -> cst.Module:
        if not self.top:
            return updated_node
        body = list(updated_node.body)
        index = 0
        while index < len(body) and _is_preamble(body[index], first=index == 0):
            index += 1
        new = self._new_statements(self.top)
        return updated_node.with_changes(body=[*body[:index], *new, *body[index:]])


def _is_preamble(statement: cst.BaseStatement, *, first: bool) -> bool:
    """A module docstring (first statement) or a ``from __future__`` import."""
    if not isinstance(statement, cst.SimpleStatementLine) or len(statement.body) != 1:
        return False
    small = statement.body[0]
    if first and isinstance(small, cst.Expr) and isinstance(small.value, cst.SimpleString):
        return True
    return (
        isinstance(small, cst.ImportFrom)
        and isinstance(small.module, cst.Name)
        and small.module.value == "__future__"
    )


def apply_to_module(source: str, fixes: Sequence[Fix]) -> tuple[str, list[Fix]]:
    """``source`` with ``fixes`` applied through libcst, and the fixes that found no node."""
    try:
        module = cst.parse_module(source)
    except cst.ParserSyntaxError as error:
        raise MigrationError(f"libcst cannot parse the file: {error.message}") from None
    transformer = _ApplyFixes(fixes)
    result = MetadataWrapper(module, unsafe_skip_copy=True).visit(transformer)
    missed = [f for f in fixes if id(f) not in transformer.applied]
    return result.code, missed

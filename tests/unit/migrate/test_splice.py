"""Fixes applied as text write what libcst writes, and libcst is used only where text cannot."""

from __future__ import annotations

import pytest

from majob.migrate import splice
from majob.migrate.codemods import apply_to_module
from majob.migrate.findings import Fix, Span
from majob.migrate.rules import Codemod


def _insert(action: str, line: int, code: str) -> Fix:
    return Fix(Codemod.NPU_MANUAL, "MA305", action, Span(line, 0, line, 5), code=code)


def _libcst_refused(source: str, fixes: object) -> tuple[str, list[Fix]]:
    raise AssertionError("went through libcst")


def test_a_line_inserted_next_to_a_one_line_statement_needs_no_libcst(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    source = '"""Doc."""\nimport torch  # the framework\nx = torch.cuda.is_available()\n'
    fixes = [
        _insert("insert-after", 2, "import torch_npu\n"),
        _insert("insert-before", 2, "import os"),
        Fix(Codemod.NPU_MANUAL, "MA303", "rename-attr", Span(3, 4, 3, 14), code="npu"),
    ]
    expected = apply_to_module(source, fixes)
    monkeypatch.setattr(splice, "_through_libcst", _libcst_refused)
    assert splice.apply_fixes(source, fixes) == expected
    assert expected[0] == (
        '"""Doc."""\nimport os\nimport torch  # the framework\nimport torch_npu\n'
        "x = torch.npu.is_available()\n"
    )


@pytest.mark.parametrize(
    ("source", "fix"),
    [
        # a block on one line: libcst sees no statement line there and leaves the fix missed
        ("if True: import torch\n", _insert("insert-after", 1, "import torch_npu\n")),
        # a statement over two lines, Windows line endings, a comment in the inserted code
        ("import torch, \\\n    os\n", _insert("insert-after", 1, "import torch_npu\n")),
        ("import torch\r\nx = 1\r\n", _insert("insert-after", 1, "import torch_npu\n")),
        ("import torch\n", _insert("insert-after", 1, "# NPU\nimport torch_npu\n")),
        ("import torch\n", _insert("insert-after", 1, "import torch_npu\n\nimport os\n")),
    ],
)
def test_anything_else_goes_through_libcst(source: str, fix: Fix) -> None:
    used: list[str] = []

    def through(text: str, fixes: list[Fix]) -> tuple[str, list[Fix]]:
        used.append(text)
        return apply_to_module(text, fixes)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(splice, "_through_libcst", through)
        result = splice.apply_fixes(source, [fix])
    assert used
    assert result == apply_to_module(source, [fix])

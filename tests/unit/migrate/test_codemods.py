"""Every codemod on golden before/after files: the exact rewrite, idempotence, and nothing of that
kind left for ``check`` to call auto-fixable."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from majob.migrate.checker import check_source
from majob.migrate.rewrite import migrate_source, target_of
from majob.migrate.rules import Codemod

GOLDEN = Path(__file__).parents[2] / "golden" / "migrate"
CASES = sorted(GOLDEN.glob("*/*.before.py"))


def _after(before: Path) -> Path:
    return before.with_name(before.name.replace(".before.", ".after."))


def test_every_codemod_has_cases() -> None:
    assert {case.parent.name for case in CASES} == {c.value for c in Codemod}


@pytest.mark.parametrize("before", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_golden(before: Path) -> None:
    codemod = Codemod(before.parent.name)
    source = before.read_text(encoding="utf-8")
    expected = _after(before).read_text(encoding="utf-8")
    result, missed = migrate_source(source, codemod, before.name)
    assert missed == []
    assert result == expected
    assert result != source
    ast.parse(result)  # still Python


@pytest.mark.parametrize("before", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_idempotent_and_nothing_fixable_left(before: Path) -> None:
    codemod = Codemod(before.parent.name)
    after = _after(before).read_text(encoding="utf-8")
    again, _ = migrate_source(after, codemod, before.name)
    assert again == after
    left = check_source(after, before.name, target_of(codemod)).findings
    assert [f for f in left if codemod in f.fixed_by] == []


def test_comments_and_formatting_outside_the_fixes_are_kept() -> None:
    source = (
        "import torch  # the framework\n"
        "\n"
        "\n"
        "def f(x):\n"
        "    # move it\n"
        "    return x.cuda(  non_blocking=True )   # odd spacing stays\n"
    )
    result, _ = migrate_source(source, Codemod.NPU_MANUAL)
    assert result == (
        "import torch  # the framework\n"
        "import torch_npu\n"
        "\n"
        "\n"
        "def f(x):\n"
        "    # move it\n"
        "    return x.npu(  non_blocking=True )   # odd spacing stays\n"
    )


def test_unparsable_source_is_left_alone() -> None:
    assert migrate_source("def f(:\n", Codemod.NPU_AUTO) == ("def f(:\n", [])


def test_nothing_to_do_means_no_change() -> None:
    source = "import numpy as np\nprint(np.zeros(2))\n"
    for codemod in Codemod:
        assert migrate_source(source, codemod)[0] == source


def test_text_between_statements_is_kept_byte_for_byte() -> None:
    # Only the top-level statements holding a fix go through libcst; the rest is copied.
    source = (
        "import torch\r\n"
        "\r\n"
        "# a comment between statements\x0c\r\n"
        "A = 'cuda'  ;  B = 1\r\n"
        "@decorate\r\n"
        "def f(x):\r\n"
        "    return x.cuda()\r\n"
        "\r\n"
        "\r\n"
        "def g():   # untouched\r\n"
        "    pass\r\n"
        "x = f(1).cuda()"  # no newline at the end
    )
    result, missed = migrate_source(source, Codemod.NPU_MANUAL)
    assert missed == []
    assert result == (
        "import torch\r\n"
        "import torch_npu\r\n"
        "\r\n"
        "# a comment between statements\x0c\r\n"
        "A = 'npu'  ;  B = 1\r\n"
        "@decorate\r\n"
        "def f(x):\r\n"
        "    return x.npu()\r\n"
        "\r\n"
        "\r\n"
        "def g():   # untouched\r\n"
        "    pass\r\n"
        "x = f(1).npu()"
    )


def _ddp(source: str) -> str:
    result, missed = migrate_source(source, Codemod.DDP, "train.py")
    assert missed == []
    return result


HELPER = """\
import torch
import torch.distributed as dist
dist.init_process_group("gloo")


def {name}(state):
{body}
"""


def test_a_save_helper_is_guarded_whole_but_not_one_that_loops_or_syncs() -> None:
    helper = _ddp(HELPER.format(name="save_checkpoint", body="    torch.save(state, 'c.pt')"))
    assert "if dist.is_initialized() and dist.get_rank() != 0:\n        return" in helper
    for body in (
        "    for part in state:\n        torch.save(part, 'c.pt')",
        "    torch.save(state, 'c.pt')\n    dist.barrier()",
    ):
        wrapped = _ddp(HELPER.format(name="save_checkpoint", body=body))
        assert "return" not in wrapped  # an early return would leave the other ranks waiting
        assert "if not dist.is_initialized() or dist.get_rank() == 0:" in wrapped


def test_npu_manual_tests_hccl_and_keeps_the_saved_location_of_a_map_location_key() -> None:
    source = (
        "import torch\nimport torch.distributed as dist\n"
        "backend = 'nccl' if dist.is_nccl_available() else 'gloo'\n"
        "state = torch.load(p, map_location={'cuda:0': 'cuda:%d' % rank})\n"
    )
    result, missed = migrate_source(source, Codemod.NPU_MANUAL, "t.py")
    assert missed == []
    assert "backend = 'hccl' if dist.is_hccl_available() else 'gloo'\n" in result
    # a GPU checkpoint's cuda:0 storages still map to this process's NPU
    assert "map_location={'cuda:0': 'npu:%d' % rank}" in result


def test_ddp_imports_torch_distributed_only_when_a_fix_uses_it() -> None:
    source = (
        "import torch\nfrom torch.utils.data import DataLoader, DistributedSampler\n"
        "torch.distributed.init_process_group('gloo')\n"
        "loader = DataLoader(ds, sampler=DistributedSampler(ds))\n"
        "for epoch in range(2):\n    for batch in loader:\n        pass\n"
    )
    result, missed = migrate_source(source, Codemod.DDP, "t.py")
    assert missed == []
    assert "loader.sampler.set_epoch(epoch)" in result
    assert "import torch.distributed as dist" not in result

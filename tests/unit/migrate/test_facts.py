"""The single pass (``FileFacts``) records facts and decides nothing: the rule modules do."""

from __future__ import annotations

import ast
import textwrap

from majob.migrate.facts import FileFacts


def collect(source: str, npu: bool = False) -> FileFacts:
    source = textwrap.dedent(source)
    facts = FileFacts(source, npu=npu)
    facts.collect(ast.parse(source))
    return facts


def test_cuda_uses_are_recorded_only_for_an_npu_target() -> None:
    source = "import torch\nx = torch.zeros(1).cuda()\n"
    assert collect(source).candidates == []
    assert [c.rule for c in collect(source, npu=True).candidates] == ["MA303"]


def test_a_compared_cuda_string_is_one_comparison_candidate() -> None:
    facts = collect("if x.type == 'cuda':\n    pass\nb = 'nccl'\n", npu=True)
    assert [(c.rule, c.detail) for c in facts.candidates] == [
        ("MA310", "'cuda'"),
        ("MA301", "'nccl'"),
    ]


def test_a_name_assigned_twice_is_no_path_constant() -> None:
    facts = collect(
        """
        DATA_DIR = "./data"
        OUT_DIR = "./out"
        OUT_DIR = "./elsewhere"
        """
    )
    assert list(facts.constants) == ["DATA_DIR"]


def test_sites_are_recorded_in_source_order_without_deciding_a_rule() -> None:
    facts = collect(
        """
        import os
        os.environ["MASTER_ADDR"] = "10.0.0.1"
        os.environ["OTHER"] = "1"
        os.environ.setdefault("CUDA_VISIBLE_DEVICES", "0")
        url = "tcp://10.0.0.1:23456"
        """
    )
    assert [s.detail for s in facts.environ_writes] == [
        "MASTER_ADDR",
        "OTHER",
        "CUDA_VISIBLE_DEVICES",
    ]
    assert [(s.span.line, s.detail) for s in facts.tcp_addresses] == [(6, "tcp://10.0.0.1:23456")]


def test_module_level_arguments_are_visible_in_functions_and_after_the_parse() -> None:
    facts = collect(
        """
        import argparse
        parser = argparse.ArgumentParser()
        def early():
            pass
        args = parser.parse_args()
        def train():
            pass
        """
    )
    parse = facts.entry_parse()
    assert parse is not None and (parse.args_name, parse.parser_name) == ("args", "parser")
    assert [c.whole for c in facts.parse_args_calls] == [True]
    module = parse.scope
    assert not facts.visible(parse, module, parse.end_line)
    assert facts.visible(parse, module, parse.end_line + 1)


def test_arguments_parsed_in_a_function_are_visible_only_there() -> None:
    facts = collect(
        """
        import argparse
        def main():
            parser = argparse.ArgumentParser()
            args = parser.parse_args()
            return args
        """
    )
    parse = facts.entry_parse()
    assert parse is not None and not parse.scope.is_module
    assert facts.visible(parse, parse.scope, parse.end_line + 1)
    assert not facts.visible(parse, facts.scope, parse.end_line + 1)

"""A model named by its Hugging Face hub id is reported as what it is (MA108), not as a
hard-coded data path: a training container usually cannot reach the hub, so the model must come
from OBS through the data_url input. A real relative path stays MA101."""

from __future__ import annotations

import ast

import pytest

from majob.migrate.checker import check_source
from majob.migrate.rewrite import migrate_source
from majob.migrate.rules import Codemod


def _script(flag: str, default: str, *, loads: bool = True) -> str:
    load = f"model = AutoModel.from_pretrained(args.{flag})\n" if loads else ""
    return (
        "import argparse\n"
        "from transformers import AutoModel\n"
        "parser = argparse.ArgumentParser()\n"
        f"parser.add_argument('--{flag}', default={default!r})\n"
        "args = parser.parse_args()\n"
        f"{load}"
    )


def _rules_on_line_4(source: str) -> list[str]:
    return [f.rule for f in check_source(source, "train.py").findings if f.line == 4]


@pytest.mark.parametrize(
    ("flag", "default", "loads"),
    [
        ("model_name_or_path", "bert-base-uncased", True),
        ("model_name_or_path", "bert-base-uncased", False),  # the name says it, unused
        ("pretrained_model_name_or_path", "facebook/opt-125m", True),  # an org/name id
        ("pretrained", "gpt2", True),  # a path-named flag that from_pretrained loads
    ],
)
def test_a_hub_id_default_is_reported_as_a_hub_model(flag: str, default: str, loads: bool) -> None:
    source = _script(flag, default, loads=loads)
    (finding,) = [f for f in check_source(source, "train.py").findings if f.line == 4]
    assert finding.rule == "MA108"
    assert "cannot reach the Hugging Face hub" in finding.message
    assert "put in OBS and read from an input (data_url)" in finding.message
    assert "hard-coded" not in finding.message
    assert f"--{flag} defaults to {default!r}" in finding.message
    assert "huggingface-cli download" in finding.hint
    assert finding.fixed_by == (Codemod.CLOUD_PATHS,)


@pytest.mark.parametrize(
    ("flag", "default", "loads"),
    [
        ("model_name_or_path", "./models/bert", True),  # a real relative path
        ("model_name_or_path", "/cache/bert-base-uncased", True),  # an absolute path
        ("data", "imagenet", False),  # a bare name for data, not a model
        ("pretrained", "gpt2", False),  # a path-named flag nothing loads from the hub
    ],
)
def test_a_path_stays_a_hard_coded_input_path(flag: str, default: str, loads: bool) -> None:
    assert _rules_on_line_4(_script(flag, default, loads=loads)) == ["MA101"]


def test_the_fix_reads_the_model_from_the_data_url_input() -> None:
    after, missed = migrate_source(
        _script("model_name_or_path", "bert-base-uncased"), Codemod.CLOUD_PATHS
    )
    assert missed == []
    tree = ast.parse(after)
    (moved,) = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Assign)
        and ast.unparse(node.targets[0]) == "args.model_name_or_path"
    ]
    assert "args.data_url" in ast.unparse(moved.value)
    assert [f.rule for f in check_source(after, "train.py").findings if f.fixed_by] == []


def _loads(argument: str) -> str:
    return (
        "from transformers import AutoModel, AutoTokenizer\n"
        f"model = AutoModel.from_pretrained({argument}, num_labels=2)\n"
    )


@pytest.mark.parametrize(
    "argument",
    [
        "'bert-base-uncased'",  # a canonical model's old name
        "'gpt2'",
        "'facebook/opt-125m'",  # org/name
        "'Qwen/Qwen2-0.5B'",
        "pretrained_model_name_or_path='google-bert/bert-base-uncased'",  # as a keyword
    ],
)
def test_a_hub_id_literal_given_to_from_pretrained_is_reported(argument: str) -> None:
    findings = check_source(_loads(argument), "train.py").findings
    (finding,) = [f for f in findings if f.line == 2]
    assert finding.rule == "MA108"
    assert "from_pretrained(" in finding.message and "downloads it" in finding.message
    assert finding.fixed_by == ()  # no flag to move: uploading the model is by hand
    assert "huggingface-cli download" in finding.hint


@pytest.mark.parametrize(
    ("argument", "rules"),
    [
        ("'./my_model'", ["MA101"]),  # a path: read from data_url
        ("'model'", []),  # a bare folder name the script saved itself
        ("'output/best'", []),  # under a local folder, not an organisation
        ("'bert_finetuned'", []),  # a canonical prefix, but a folder's spelling
        ("args.model", []),  # the flag is judged where it is declared
    ],
)
def test_a_saved_folder_given_to_from_pretrained_is_no_hub_model(
    argument: str, rules: list[str]
) -> None:
    findings = check_source(_loads(argument), "train.py").findings
    assert [f.rule for f in findings if f.line == 2] == rules


HF_DATACLASSES = """\
from dataclasses import dataclass, field
from transformers import HfArgumentParser, TrainingArguments


@dataclass
class ModelArguments:
    model_name_or_path: str = field(default="bert-base-uncased", metadata={"help": "the model"})
    tokenizer_name: str = "gpt2"
    cache_dir: str = field(default=None)


@dataclass
class DataArguments:
    train_file: str = field(default="data/train.csv")
    dataset_name: str = "glue"  # a dataset's name, not a path
    max_length: int = 128


@dataclass
class Unparsed:  # no parser makes flags of it
    model_name_or_path: str = "roberta-base"


parser = HfArgumentParser((ModelArguments, DataArguments, TrainingArguments))
model_args, data_args, training_args = parser.parse_args_into_dataclasses()
"""


def test_the_fields_of_dataclasses_hfargumentparser_parses_are_flags() -> None:
    findings = check_source(HF_DATACLASSES, "train.py").findings
    got = [(f.line, f.rule, f.message.rsplit(": ", 1)[-1]) for f in findings if f.rule != "MA107"]
    assert got == [
        (7, "MA108", "--model_name_or_path defaults to 'bert-base-uncased'"),
        (8, "MA108", "--tokenizer_name defaults to 'gpt2'"),
        (14, "MA101", "--train_file defaults to 'data/train.csv'"),
    ]
    assert all(f.fixed_by == () for f in findings if f.rule != "MA107")  # moved by hand

"""``metrics:`` and ``expect:`` in the spec: what is accepted, and errors at file:line:col."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import SpecError
from majob.spec.expect import parse_bound
from majob.spec.load import load_spec
from majob.spec.schema import spec_json_schema

HEAD = """\
name: tiny
code: {dir: ., boot_file: train.py}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u}
"""


def load(tmp_path: Path, tail: str):
    (tmp_path / "train.py").write_text("")
    path = tmp_path / "spec.yaml"
    path.write_text(HEAD + tail)
    return load_spec(path)


def problems(tmp_path: Path, tail: str) -> list[str]:
    with pytest.raises(SpecError) as raised:
        load(tmp_path, tail)
    return [line.split("spec.yaml:", 1)[1] for line in raised.value.lines() if "spec.yaml:" in line]


def test_metrics_and_expect_are_read(tmp_path: Path) -> None:
    spec = load(
        tmp_path,
        "metrics:\n  loss: 'loss=([0-9.]+)'\nexpect:\n  outputs: [model.pth]\n"
        "  log_excludes: ['nan']\n  metrics: {loss: '<= 2.5e0'}\n",
    )
    assert spec.metrics == {"loss": "loss=([0-9.]+)"}
    assert spec.expect.outputs == ("model.pth",)
    assert parse_bound(spec.expect.metrics["loss"]) == ("<=", 2.5)


def test_a_spec_without_them_has_empty_ones(tmp_path: Path) -> None:
    spec = load(tmp_path, "")
    assert spec.metrics == {}
    assert spec.expect.outputs == () and spec.expect.metrics == {}


def test_bad_metric_regexes_are_located(tmp_path: Path) -> None:
    assert problems(tmp_path, "metrics:\n  loss: 'loss=[0-9'\n  acc: 'acc=[0-9.]+'\n") == [
        "6:9: metrics.loss: 'loss=[0-9' is not a regular expression: unterminated character set at position 5",
        "7:8: metrics.acc: 'acc=[0-9.]+' needs exactly one group around the number, like 'loss=([0-9.]+)'",
    ]


def test_bad_expect_entries_are_located(tmp_path: Path) -> None:
    tail = "metrics: {loss: 'loss=([0-9.]+)'}\nexpect:\n  log_contains: ['(']\n  metrics: {loss: 'below 2'}\n"
    assert problems(tmp_path, tail) == [
        "7:18: expect.log_contains[0]: '(' is not a regular expression: missing ), unterminated subpattern at position 0",
        "8:19: expect.metrics.loss: 'below 2' is not a bound: write one of <, <=, >, >=, == and a number",
    ]


def test_an_expected_metric_must_be_defined(tmp_path: Path) -> None:
    assert problems(tmp_path, "expect:\n  metrics: {loss: '< 2'}\n") == [
        "6:13: expect.metrics.loss: 'loss' is not a metric: define it under metrics: (e.g. loss: 'loss=([0-9.]+)')",
    ]


def test_the_schema_describes_them() -> None:
    schema = spec_json_schema()
    assert "metrics" in schema["properties"] and "expect" in schema["properties"]
    assert "Expect" in schema["$defs"]

"""``expect.precision`` and a stage's own ``expect:`` (issue 39): where they may be written,
what a stage's checks become, and that a spec without them keeps its digest."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.spec.digest import spec_digest
from majob.spec.load import load_spec
from tests.unit.spec.conftest import GOOD, spec_problems

BASE = (
    GOOD
    + """\
metrics: {loss: 'loss=([0-9.]+)'}
expect:
  outputs: [model.pth]
  metrics: {loss: '< 2.0'}
"""
)


def _spec(project: Path, debug_extra: str, top: str = "") -> Path:
    text = BASE.replace(
        "  debug:\n    flavor: modelarts.vm.cpu.2u\n",
        "  debug:\n    flavor: modelarts.vm.cpu.2u\n" + debug_extra,
    )
    path = project / "gate.yaml"
    path.write_text(text + top)
    return path


def test_a_stages_expect_replaces_only_the_keys_it_sets(project: Path) -> None:
    spec = load_spec(_spec(project, "    expect:\n      precision: {like: local, steps: 5}\n"))
    debug, formal = spec.at_stage("debug").expect, spec.at_stage("formal").expect
    assert debug.outputs == ("model.pth",) and debug.metrics == {"loss": "< 2.0"}
    assert debug.precision is not None
    assert (debug.precision.like, debug.precision.steps, debug.precision.loss_rtol) == (
        "local",
        5,
        0.05,
    )
    assert formal.precision is None  # the debug stage's own
    replaced = load_spec(_spec(project, "    expect: {metrics: {loss: '< 9'}}\n"))
    assert replaced.at_stage("debug").expect.metrics == {"loss": "< 9"}
    assert replaced.at_stage("debug").expect.outputs == ("model.pth",)


def test_a_spec_without_the_gate_keeps_its_digest(project: Path) -> None:
    plain = load_spec(_spec(project, ""))
    staged = load_spec(_spec(project, "    expect:\n      precision: {like: local}\n"))
    assert spec_digest(plain) == spec_digest(staged)  # stages are not in the digest
    top = load_spec(_spec(project, "", "  precision: {like: local}\n"))
    assert spec_digest(top) != spec_digest(plain)


@pytest.mark.parametrize(
    ("debug_extra", "top", "expected"),
    [
        (
            "    expect:\n      precision: {like: debug}\n",
            "",
            "32:19 stages.debug.expect.precision.like: the debug stage cannot train like debug: "
            "name one of: local",
        ),
        (
            "    expect:\n      precision: {like: formal}\n",
            "",
            "32:25 stages.debug.expect.precision.like: must be 'local' or 'debug'",
        ),
        (
            "    expect:\n      precision: {like: local, loss_rtol: 0}\n",
            "",
            "32:43 stages.debug.expect.precision.loss_rtol: must be greater than 0",
        ),
        (
            "    expect:\n      precision: {like: local, metric: acc}\n",
            "",
            "32:32 stages.debug.expect.precision.metric: no metric named 'acc' in `metrics:` "
            "(defined: loss); add one, e.g. acc: 'acc=([0-9.eE+-]+)'",
        ),
    ],
)
def test_a_gate_that_cannot_hold_is_refused_where_it_is_written(
    project: Path, debug_extra: str, top: str, expected: str
) -> None:
    assert spec_problems(_spec(project, debug_extra, top)) == [expected]


def test_the_local_stage_has_nothing_earlier_to_train_like(project: Path) -> None:
    text = BASE.replace(
        "    timeout: 10m\n", "    timeout: 10m\n    expect: {precision: {like: local}}\n"
    )
    path = project / "local.yaml"
    path.write_text(text)
    (problem,) = spec_problems(path)
    assert problem.endswith(
        "stages.local.expect.precision.like: the local stage cannot train like local: move it "
        "to a later stage"
    )


def test_a_key_of_another_place_is_not_proposed_as_itself(project: Path) -> None:
    # "unknown key 'image'; did you mean 'image'?" said nothing: it says where 'image' goes.
    (problem,) = spec_problems(_spec(project, "    image: {engine: PyTorch}\n"))
    assert problem == (
        "31:5 stages.debug.image: unknown key 'image' here; 'image' is a key of the top level; "
        "stages.debug takes: nodes, flavor, hyperparameters, env, timeout, outputs, perf, expect"
    )
    (nested,) = spec_problems(_spec(project, "    loss_rtol: 0.1\n"))
    assert "'loss_rtol' is a key of expect.precision" in nested

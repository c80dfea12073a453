"""The spec's ``perf:`` block: its defaults, its schedule, its errors (at their line and column)
and a stage's own ``perf:``."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import SpecError
from majob.spec.load import load_spec
from majob.spec.perf import Perf

from .conftest import GOOD


def _problems(path: Path) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(path)
    return [f"{p.line}:{p.col} {p.path}: {p.message}" for p in caught.value.problems]


def test_the_defaults_record_three_steps_after_two_skipped_and_one_warm_up() -> None:
    perf = Perf.model_validate({})
    assert (perf.skip_first, perf.wait, perf.warmup, perf.active, perf.repeat) == (2, 0, 1, 3, 1)
    assert (perf.level, perf.stacks, perf.memory, perf.shapes) == ("level0", False, False, False)
    assert perf.profiled_steps() == [3, 4, 5]
    assert perf.last_step == 5


def test_the_profiled_steps_follow_torch_s_schedule_over_cycles() -> None:
    perf = Perf.model_validate({"skip_first": 1, "wait": 2, "warmup": 1, "active": 2, "repeat": 2})
    # skip 0; cycle 1: wait 1-2, warm-up 3, record 4-5; cycle 2: wait 6-7, warm-up 8, record 9-10
    assert perf.profiled_steps() == [4, 5, 9, 10]
    assert perf.last_step == 10


def test_a_spec_without_perf_has_none_and_a_stage_may_set_its_own(project: Path) -> None:
    spec = load_spec(project / "spec.yaml")
    assert spec.perf is None
    text = GOOD + "perf: {active: 5, stacks: true}\n"
    text = text.replace(
        "  debug:\n    flavor: modelarts.vm.cpu.2u\n",
        "  debug:\n    flavor: modelarts.vm.cpu.2u\n    perf: {active: 1, level: level1}\n",
    )
    (project / "spec.yaml").write_text(text)
    spec = load_spec(project / "spec.yaml")
    assert spec.perf is not None and spec.perf.active == 5 and spec.perf.stacks
    debug = spec.at_stage("debug").perf
    assert debug is not None and (debug.active, debug.level, debug.stacks) == (1, "level1", False)
    assert spec.at_stage("local").perf == spec.perf


def test_perf_errors_are_reported_where_they_were_written(project: Path) -> None:
    (project / "spec.yaml").write_text(
        GOOD + "perf:\n  active: 0\n  level: level9\n  stack: true\n  window_seconds: -1\n"
    )
    problems = _problems(project / "spec.yaml")
    lines = GOOD.count("\n")
    assert any(p.startswith(f"{lines + 2}:11 perf.active:") for p in problems), problems
    assert any(p.startswith(f"{lines + 3}:10 perf.level:") for p in problems), problems
    assert any(p.startswith(f"{lines + 4}:3 perf.stack:") for p in problems), problems
    assert any(p.startswith(f"{lines + 5}:19 perf.window_seconds:") for p in problems), problems


def test_a_stage_s_perf_error_names_the_stage(project: Path) -> None:
    text = GOOD.replace(
        "  debug:\n    flavor: modelarts.vm.cpu.2u\n",
        "  debug:\n    flavor: modelarts.vm.cpu.2u\n    perf: {repeat: 0}\n",
    )
    (project / "spec.yaml").write_text(text)
    (problem,) = _problems(project / "spec.yaml")
    line = text.splitlines().index("    perf: {repeat: 0}") + 1
    assert problem.startswith(f"{line}:20 stages.debug.perf.repeat:"), problem


def test_the_step_line_is_said_every_30_seconds_unless_set_and_0_is_never() -> None:
    assert Perf.model_validate({}).step_line_seconds == 30.0
    assert Perf.model_validate({"step_line_seconds": 0}).step_line_seconds == 0
    with pytest.raises(ValueError, match="step_line_seconds"):
        Perf.model_validate({"step_line_seconds": -1})

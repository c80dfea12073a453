"""``expect.perf``: its bounds as written, the spec rules around it, and how a diagnosis is
judged against it (profiles built by hand: a step that waits 5 ms for data of ~6 ms)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from majob.errors import SpecError
from majob.perf.report import Diagnosis, diagnose
from majob.pipeline.judge import Outcome
from majob.pipeline.perfstage import judge_perf, perf_failures, stage_profiled
from majob.spec.load import load_spec
from majob.spec.perf_expect import PerfExpect, parse_share_bound, parse_time_bound

SPEC = """\
name: tiny
code: {{dir: code, boot_file: train.py}}
image: {image}
resources: {{flavor: modelarts.vm.cpu.8u}}
{outputs}
expect:
  perf: {perf}
"""
PRESET = "{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}"
OUTPUTS = 'outputs: [{name: train_url, obs: "obs://b-1/out/"}]'


def _spec(tmp_path: Path, perf: str, *, outputs: str = OUTPUTS, image: str = PRESET) -> Path:
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text("print('hi')\n")
    path = tmp_path / "spec.yaml"
    path.write_text(SPEC.format(perf=perf, outputs=outputs, image=image))
    return path


@pytest.mark.parametrize(
    ("text", "expected"),
    [("< 120", ("<", 120.0)), ("<= 120 ms", ("<=", 120.0)), (" > 0.5 s ", (">", 500.0))],
)
def test_a_time_bound_is_in_milliseconds_unless_it_says_seconds(
    text: str, expected: tuple[str, float]
) -> None:
    assert parse_time_bound(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"), [("< 30%", ("<", 0.3)), ("<= 0.25", ("<=", 0.25)), ("> 0%", (">", 0.0))]
)
def test_a_share_bound_is_a_percentage_or_a_fraction(
    text: str, expected: tuple[str, float]
) -> None:
    op, value = parse_share_bound(text)
    assert op == expected[0] and value == pytest.approx(expected[1])


@pytest.mark.parametrize("text", ["30%", "< lots", "< 120 min", "~ 3"])
def test_a_time_bound_that_is_not_one_says_the_form(text: str) -> None:
    with pytest.raises(ValueError, match="step-time bound: write an operator"):
        parse_time_bound(text)


def test_a_share_above_the_whole_step_is_refused() -> None:
    with pytest.raises(ValueError, match="between 0% and 100%"):
        parse_share_bound("< 130%")


def test_a_bad_bound_in_the_spec_points_at_its_line(tmp_path: Path) -> None:
    path = _spec(tmp_path, "{data_wait: '< lots'}")
    with pytest.raises(SpecError) as raised:
        load_spec(path)
    assert f"{path}:7:" in str(raised.value) and "expect.perf.data_wait" in str(raised.value)
    assert "'< 30%'" in str(raised.value)


def test_an_unknown_key_is_refused(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="data_waits"):
        load_spec(_spec(tmp_path, "{data_waits: '< 30%'}"))


def test_expect_perf_needs_an_output_for_the_profile(tmp_path: Path) -> None:
    with pytest.raises(SpecError, match="add an `outputs:` entry"):
        load_spec(_spec(tmp_path, "{data_wait: '< 30%'}", outputs=""))


def test_a_custom_image_can_only_be_held_to_it_locally(tmp_path: Path) -> None:
    custom = '{swr: "swr.cn-north-4.myhuaweicloud.com/team/img:1", command: "bash run.sh"}'
    with pytest.raises(SpecError, match=r"set expect.perf.stages: \[local\]"):
        load_spec(_spec(tmp_path, "{data_wait: '< 30%'}", image=custom))
    spec = load_spec(_spec(tmp_path, "{data_wait: '< 30%', stages: [local]}", image=custom))
    assert spec.expect.perf is not None and spec.expect.perf.stages == ("local",)


def test_the_stages_it_names_are_profiled(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, "{data_wait: '< 30%', stages: [local, debug]}"))
    assert stage_profiled(spec, "local", False) and stage_profiled(spec, "debug", False)
    assert not stage_profiled(spec, "formal", False) and stage_profiled(spec, "formal", True)


def _diagnosis(plain_profile: Callable[..., Path], tmp_path: Path, data: float) -> Diagnosis:
    root = plain_profile(data=data)
    return diagnose("p", root, tmp_path / "scratch", run_advisor=False)


def test_a_data_bound_step_fails_a_data_wait_bound_and_says_by_how_much(
    plain_profile: Callable[..., Path], tmp_path: Path
) -> None:
    found = _diagnosis(plain_profile, tmp_path, 5000.0)
    (failure,) = perf_failures(PerfExpect.model_validate({"data_wait": "< 30%"}), found)
    assert failure.startswith("expect.perf.data_wait: data_wait < 30% failed: ")
    assert "of a step on worker-0-rank0" in failure
    assert perf_failures(PerfExpect.model_validate({"data_wait": "<= 100%"}), found) == []


def test_the_largest_finding_and_the_step_time_are_bounded_too(
    plain_profile: Callable[..., Path], tmp_path: Path
) -> None:
    found = _diagnosis(plain_profile, tmp_path, 5000.0)
    expect = PerfExpect.model_validate({"findings": "< 5%", "step_p50": "< 0.001 ms"})
    failures = perf_failures(expect, found)
    assert len(failures) == 2
    assert failures[0].startswith("expect.perf.step_p50: step_p50 < 0.001 ms failed: ")
    assert failures[1].startswith("expect.perf.findings: findings < 5% failed: ")
    assert "num_workers" in failures[1]  # the finding's first advice comes along
    loose = PerfExpect.model_validate({"step_p50": "< 3600 s", "step_p95": "< 3600 s"})
    assert perf_failures(loose, found) == []


def test_a_quiet_step_passes_the_finding_bound(
    plain_profile: Callable[..., Path], tmp_path: Path
) -> None:
    found = _diagnosis(plain_profile, tmp_path, 1.0)
    assert perf_failures(PerfExpect.model_validate({"findings": "< 5%"}), found) == []


def test_no_profile_fails_the_stage_and_says_why() -> None:
    expect = PerfExpect.model_validate({"data_wait": "< 30%"})
    (failure,) = perf_failures(expect, "the local run wrote no profiling/")
    assert failure == (
        "expect.perf: the stage has no profile to check (the local run wrote no profiling/)"
    )


def test_a_stage_it_does_not_name_or_that_failed_keeps_its_outcome(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path, "{data_wait: '< 30%', stages: [local]}"))
    missing = "none"
    assert judge_perf(spec, "debug", Outcome(True), missing).passed
    failed = judge_perf(spec, "local", Outcome(False, "exit 1"), missing)
    assert not failed.passed and failed.reason == "exit 1"
    judged = judge_perf(spec, "local", Outcome(True), missing)
    assert not judged.passed and judged.reason.startswith("expect.perf: the stage has no profile")

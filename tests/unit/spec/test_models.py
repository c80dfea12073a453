from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from majob.spec.durations import format_duration, parse_duration
from majob.spec.fields import render_scalar
from majob.spec.models import JobSpec
from majob.spec.rules import SpecRuleErrors, cards_in_flavor


def _spec(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "name": "job",
        "code": {"boot_file": "train.py"},
        "image": {"engine": "PyTorch", "version": "v"},
        "resources": {"flavor": "modelarts.vm.cpu.8u"},
    }
    base.update(changes)
    return base


def _rule_messages(data: dict[str, Any]) -> list[tuple[tuple[str | int, ...], str]]:
    with pytest.raises(ValidationError) as caught:
        JobSpec.model_validate(data)
    errors = [e["ctx"]["error"] for e in caught.value.errors() if "ctx" in e]
    rules = [e for e in errors if isinstance(e, SpecRuleErrors)]
    assert rules, caught.value
    return rules[0].problems


def test_render_scalar_is_lossless() -> None:
    assert render_scalar(True) == "true"
    assert render_scalar(False) == "false"
    assert render_scalar(3) == "3"
    assert render_scalar(1e-5) == "1e-05"
    assert float(render_scalar(0.1)) == 0.1
    assert render_scalar("a b") == "a b"


def test_durations() -> None:
    assert parse_duration("1h30m") == 5400
    assert parse_duration(90) == 90
    assert parse_duration("2d") == 172800
    assert format_duration(5400) == "1h30m"
    for bad in ("soon", "0", -1, True, "1x", ""):
        with pytest.raises(ValueError):
            parse_duration(bad)


def test_cards_from_flavor() -> None:
    assert cards_in_flavor("modelarts.bm.snt9.xlarge.8") == 8
    assert cards_in_flavor("modelarts.pool.visual.4xlarge") == 4
    assert cards_in_flavor("modelarts.pool.visual.xlarge") == 1
    assert cards_in_flavor("modelarts.vm.cpu.8u") is None


def test_ascend_detection() -> None:
    ascend_engine = JobSpec.model_validate(
        _spec(image={"engine": "Ascend-Powered-Engine", "version": "pytorch-cann_6"})
    )
    assert ascend_engine.is_ascend
    assert JobSpec.model_validate(
        _spec(resources={"flavor": "modelarts.bm.snt9.xlarge.1"})
    ).is_ascend
    assert not JobSpec.model_validate(_spec()).is_ascend


def test_stage_rules_are_reported_where_the_stage_breaks_them() -> None:
    data = _spec(
        resources={"flavor": "modelarts.pool.visual.xlarge", "nodes": 2},
        distributed={"backend": "nccl"},
        stages={"debug": {"nodes": 1, "flavor": "modelarts.pool.visual.2xlarge"}},
    )
    problems = _rule_messages(data)
    assert problems == [
        (
            ("stages", "debug", "nodes"),
            "a single-node multi-card DDP job gets no --world_size/--rank from ModelArts: add "
            "hyperparameters world_size and rank",
        )
    ]
    data["hyperparameters"] = {"world_size": 2, "rank": 0}
    JobSpec.model_validate(data)


def test_stage_env_and_hyperparameters_are_checked() -> None:
    data = _spec(
        outputs=[{"name": "train_url", "obs": "obs://bkt/out/"}],
        stages={"local": {"env": {"MA_X": 1}, "hyperparameters": {"train_url": "x"}}},
    )
    assert _rule_messages(data) == [
        (
            ("stages", "local", "env", "MA_X"),
            "the MA_ prefix is reserved by ModelArts; rename the variable",
        ),
        (
            ("stages", "local", "hyperparameters", "train_url"),
            "'train_url' is an input/output name; rename the hyperparameter",
        ),
    ]


def test_too_many_env_vars() -> None:
    env = {f"V{i}": i for i in range(101)}
    assert _rule_messages(_spec(env=env)) == [
        (("env",), "ModelArts takes at most 100 env variables")
    ]


def test_image_rules() -> None:
    for image, text in [
        ({"swr": "org/img:1", "command": "a\nb"}, "one line"),
        ({"engine": "PyTorch", "version": "v", "command": "x"}, "only for custom images"),
        ({"engine": "PyTorch", "version": "v", "uid": 1000}, "only for custom images"),
        ({}, "needs a preset engine"),
    ]:
        with pytest.raises(ValidationError, match=text):
            JobSpec.model_validate(_spec(image=image))
    custom = JobSpec.model_validate(
        _spec(image={"swr": "org/img:1", "command": "python x.py", "uid": 1000})
    )
    assert custom.image.is_custom


def test_frozen() -> None:
    spec = JobSpec.model_validate(_spec())
    with pytest.raises(ValidationError):
        spec.name = "other"  # type: ignore[misc]

"""``fault_tolerance:`` compiled: the documented annotations, the checkpoint output marked for
predownload in the REST body, and what the Estimator cannot say kept in its notes."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from majob.compile import to_estimator, to_rest_body
from majob.compile.sdk_body import estimator_from_body
from majob.spec.models import JobSpec


def _spec(fault_tolerance: dict[str, Any] | None = None) -> JobSpec:
    data: dict[str, Any] = {
        "name": "resilient",
        "code": {"boot_file": "train.py", "obs": "obs://bucket-a/job/code/"},
        "image": {"engine": "PyTorch", "version": "pytorch_1.8.0-cuda_10.2-py_3.7"},
        "resources": {"flavor": "modelarts.vm.cpu.8u"},
        "outputs": [
            {"name": "train_url", "obs": "obs://bucket-a/job/out/"},
            {"name": "log_url", "obs": "obs://bucket-a/job/extra/"},
        ],
    }
    if fault_tolerance is not None:
        data["fault_tolerance"] = fault_tolerance
    return JobSpec.model_validate(data)


@pytest.mark.parametrize(
    ("block", "annotations"),
    [
        ({"retries": 3}, {"fault-tolerance/job-retry-num": "3"}),
        (
            {"retries": 128, "restart_on": "any", "hang": True},
            {
                "fault-tolerance/job-retry-num": "128",
                "fault-tolerance/job-unconditional-retry": "true",
                "fault-tolerance/hang-retry": "true",
            },
        ),
    ],
)
def test_the_block_becomes_the_documented_annotations(
    block: dict[str, Any], annotations: dict[str, str]
) -> None:
    body = to_rest_body(_spec(block))
    assert body["metadata"]["annotations"] == annotations


def test_no_block_and_no_retries_send_no_annotations() -> None:
    assert "annotations" not in to_rest_body(_spec())["metadata"]
    assert "annotations" not in to_rest_body(_spec({"retries": 0}))["metadata"]


def test_only_the_checkpoint_output_is_predownloaded() -> None:
    body = to_rest_body(_spec({"retries": 2, "checkpoints": "train_url/ckpt/"}))
    marked = {o["name"]: o.get("prefetch_to_local") for o in body["algorithm"]["outputs"]}
    assert marked == {"train_url": True, "log_url": None}


def test_every_stage_carries_it() -> None:
    spec = _spec({"retries": 1, "checkpoints": "train_url/ckpt/"})
    for stage in ("debug", "formal"):
        assert to_rest_body(spec, stage)["metadata"]["annotations"] == {
            "fault-tolerance/job-retry-num": "1"
        }


def test_the_estimator_notes_what_it_cannot_say() -> None:
    spec = _spec({"retries": 2, "hang": True, "checkpoints": "train_url/ckpt/"})
    notes = to_estimator(spec).notes
    assert any("fault-tolerance/job-retry-num='2'" in n for n in notes)
    assert any("fault-tolerance/hang-retry='true'" in n for n in notes)
    assert any("'train_url' should be predownloaded" in n for n in notes)
    assert "fault-tolerance" in to_estimator(spec).to_python()
    from_body = estimator_from_body(to_rest_body(spec))
    assert any("'train_url' is to be predownloaded" in n for n in from_body.notes)


def test_the_sdk_models_drop_only_the_predownload_flag(
    through_sdk_models: Callable[[dict[str, Any]], Any],
) -> None:
    """huaweicloudsdkmodelarts 3.1.219 models the annotations but not an output's
    ``prefetch_to_local``: majob sends the body as a dict, so the flag still goes on the wire
    (service/rest.py); this pins what the models lose, should a later SDK learn it."""
    body = to_rest_body(_spec({"retries": 2, "hang": True, "checkpoints": "train_url/ckpt/"}))
    back = through_sdk_models(body)
    assert back["metadata"]["annotations"] == body["metadata"]["annotations"]
    del body["algorithm"]["outputs"][0]["prefetch_to_local"]
    assert json.dumps(back, sort_keys=True) == json.dumps(body, sort_keys=True)

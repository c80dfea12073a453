"""The REST v2 create-training-job body: its shape, the stage decisions, and the proof that the
official ``huaweicloudsdkmodelarts`` request models take every body without loss."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest

from majob.compile import to_estimator, to_rest_body
from majob.errors import CompileError
from majob.spec.models import STAGES, JobSpec, Stage

LoadCase = Callable[[str], JobSpec]
RoundTrip = Callable[[dict[str, Any]], Any]


def _canonical(data: object) -> str:
    # Types matter: True == 1 and 1 == 1.0 in Python, not in JSON.
    return json.dumps(data, sort_keys=True, ensure_ascii=False)


@pytest.mark.parametrize("stage", STAGES)
def test_sdk_request_models_take_the_body_without_loss(
    case: str, stage: Stage, load_case: LoadCase, through_sdk_models: RoundTrip
) -> None:
    body = to_rest_body(load_case(case), stage)
    assert _canonical(through_sdk_models(body)) == _canonical(body)


def test_the_sdk_round_trip_does_catch_loss(
    load_case: LoadCase, through_sdk_models: RoundTrip
) -> None:
    """Guard for the test above: an unknown key or a non-string parameter value changes."""
    body = to_rest_body(load_case("preset_single"))
    body["algorithm"]["boot_command"] = "python x.py"  # not a Job field
    assert _canonical(through_sdk_models(body)) != _canonical(body)
    body = to_rest_body(load_case("preset_single"))
    body["algorithm"]["parameters"][0]["value"] = 3  # the model types it as str
    assert _canonical(through_sdk_models(body)) != _canonical(body)


def _spec(**changes: Any) -> JobSpec:
    data: dict[str, Any] = {
        "name": "job",
        "code": {"boot_file": "train.py", "obs": "obs://bucket-a/job/code/"},
        "image": {"engine": "PyTorch", "version": "pytorch_1.8.0-cuda_10.2-py_3.7"},
        "resources": {"flavor": "modelarts.vm.cpu.8u"},
    }
    data.update(changes)
    return JobSpec.model_validate(data)


def test_minimal_preset_body_in_key_order() -> None:
    body = to_rest_body(_spec())
    assert json.dumps(body) == json.dumps(
        {
            "kind": "job",
            "metadata": {"name": "job"},
            "algorithm": {
                "code_dir": "/bucket-a/job/code/",
                "boot_file": "/bucket-a/job/code/train.py",
                "working_dir": "/home/ma-user/modelarts/user-job-dir/code",
                "engine": {
                    "engine_name": "PyTorch",
                    "engine_version": "pytorch_1.8.0-cuda_10.2-py_3.7",
                },
                "parameters": [],
                "inputs": [],
                "outputs": [],
                "environments": {},
            },
            "spec": {"resource": {"flavor_id": "modelarts.vm.cpu.8u", "node_count": 1}},
        }
    )


def test_custom_image_sends_command_and_image_url_not_boot_file() -> None:
    spec = _spec(image={"swr": "swr.example/org/img:1", "command": "bash run.sh", "uid": 1000})
    algorithm = to_rest_body(spec)["algorithm"]
    assert algorithm["command"] == "bash run.sh"
    assert algorithm["engine"] == {"image_url": "swr.example/org/img:1"}
    assert "boot_file" not in algorithm and "working_dir" not in algorithm


def test_channels_paths_and_pool() -> None:
    spec = _spec(
        inputs=[{"name": "data_url", "obs": "obs://bucket-a/d/x.zip", "description": "zip"}],
        outputs=[{"name": "out", "obs": "obs://bucket-a/o/", "access_method": "env"}],
        log="obs://bucket-a/log/",
        resources={"flavor": "modelarts.pool.visual.xlarge", "nodes": 3, "pool": "p-1"},
    )
    body = to_rest_body(spec)
    assert body["algorithm"]["inputs"] == [
        {
            "name": "data_url",
            "description": "zip",
            "access_method": "parameter",
            "remote": {"obs": {"obs_url": "/bucket-a/d/x.zip"}},
        }
    ]
    assert body["algorithm"]["outputs"] == [
        {  # the formal stage's own folder of the output
            "name": "out",
            "access_method": "env",
            "remote": {"obs": {"obs_url": "/bucket-a/o/formal/"}},
        }
    ]
    assert body["spec"]["resource"] == {
        "flavor_id": "modelarts.pool.visual.xlarge",
        "node_count": 3,
        "pool_id": "p-1",
    }
    assert body["spec"]["log_export_path"] == {"obs_url": "/bucket-a/log/"}


@pytest.mark.parametrize(
    ("name", "stage", "expected"),
    [
        ("job", "formal", "job"),
        ("job", "debug", "job-debug"),
        ("job", "local", "job-local"),
        ("j" * 64, "formal", "j" * 64),
        ("j" * 64, "debug", "j" * 58 + "-debug"),
        ("j" * 60, "local", "j" * 58 + "-local"),
        ("j" * 58, "debug", "j" * 58 + "-debug"),
    ],
)
def test_stage_job_names_stay_within_64(name: str, stage: Stage, expected: str) -> None:
    assert to_rest_body(_spec(name=name), stage)["metadata"]["name"] == expected


@pytest.mark.parametrize(
    ("auto_stop", "timeouts", "stage", "hours"),
    [
        (None, {}, "formal", None),
        ("5h", {}, "formal", 5),
        ("90m", {}, "formal", 2),  # rounded up: never stop before the granted time
        (None, {"debug": "10m"}, "debug", 1),
        ("5h", {"debug": "10m"}, "debug", 1),  # the shorter one wins
        ("2h", {"formal": "3d"}, "formal", 2),
        ("5h", {"debug": "10m"}, "formal", 5),  # the debug timeout leaves the formal job alone
        (None, {"local": "3600"}, "local", 1),
    ],
)
def test_auto_stop_is_the_shorter_limit_in_whole_hours(
    auto_stop: str | None, timeouts: dict[str, str], stage: Stage, hours: int | None
) -> None:
    spec = _spec(auto_stop=auto_stop, stages={s: {"timeout": t} for s, t in timeouts.items()})
    auto = to_rest_body(spec, stage)["spec"].get("auto_stop")
    assert auto == (None if hours is None else {"time_unit": "HOURS", "duration": hours})


def test_local_stage_compiles_with_its_overrides() -> None:
    spec = _spec(
        hyperparameters={"epochs": 5},
        env={"A": "1"},
        stages={"local": {"nodes": 2, "hyperparameters": {"epochs": 1}, "env": {"B": "2"}}},
    )
    body = to_rest_body(spec, "local")
    assert body["metadata"]["name"] == "job-local"
    assert body["spec"]["resource"]["node_count"] == 2
    assert body["algorithm"]["parameters"] == [{"name": "epochs", "value": "1"}]
    assert body["algorithm"]["environments"] == {"A": "1", "B": "2"}


@pytest.mark.parametrize(
    ("code", "image", "message", "hint"),
    [
        ({"boot_file": "train.py"}, None, "code.obs is not set", "default bucket"),
        ({"boot_file": "train.py", "obs": "obs://bucket-a/"}, None, "bucket root", "below"),
        (
            {"boot_file": "run.sh", "obs": "obs://bucket-a/c/"},
            None,
            "not a .py file",
            "custom image",
        ),
    ],
)
def test_specs_that_cannot_become_a_job(
    code: dict[str, str], image: dict[str, str] | None, message: str, hint: str
) -> None:
    spec = _spec(code=code, **({"image": image} if image else {}))
    with pytest.raises(CompileError) as info:
        to_rest_body(spec)
    assert message in info.value.message and "'job'" in info.value.message
    assert info.value.hint is not None and hint in info.value.hint


def test_custom_image_may_boot_anything() -> None:
    spec = _spec(
        code={"boot_file": "run.sh", "obs": "obs://bucket-a/c/"},
        image={"swr": "swr.example/o/i:1", "command": "bash run.sh"},
    )
    assert to_rest_body(spec)["algorithm"]["command"] == "bash run.sh"


def test_a_dedicated_cpu_pool_sends_no_flavor() -> None:
    spec = _spec(resources={"pool": "pool-cpu-1", "nodes": 2})
    assert to_rest_body(spec)["spec"]["resource"] == {"node_count": 2, "pool_id": "pool-cpu-1"}
    call = to_estimator(spec)
    assert "train_instance_type" not in call.estimator
    assert call.estimator["pool_id"] == "pool-cpu-1"

"""The notebook backend's REST body → Estimator mapping (``compile/sdk_body.py``) says what the
spec → Estimator compiler (``to_estimator``) says, for every golden spec and stage; what the
Estimator cannot carry is a note, never dropped silently."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from majob.compile import TrainingFiles, to_estimator, to_rest_body
from majob.compile.sdk_body import estimator_from_body, obs_uri
from majob.errors import CompileError
from majob.spec.models import STAGES, JobSpec, Stage


def _plain(value: Any) -> Any:
    if hasattr(value, "kwargs"):
        return value.kwargs()
    if isinstance(value, list):
        return [_plain(v) for v in value]
    return value


def _boot(files: TrainingFiles) -> str | None:
    """The boot file as a full ``obs://`` path, however it was written."""
    if files.boot_file is None:
        return None
    return (
        files.boot_file
        if files.boot_file.startswith("obs://")
        else files.code_dir + files.boot_file
    )


@pytest.mark.parametrize("stage", STAGES)
def test_the_body_mapping_agrees_with_the_spec_compiler(
    case: str, stage: Stage, load_case: Callable[[str], JobSpec]
) -> None:
    spec = load_case(case)
    from_spec = to_estimator(spec, stage)
    from_body = estimator_from_body(to_rest_body(spec, stage))
    want, got = dict(from_spec.estimator), dict(from_body.estimator)
    want_files, got_files = want.pop("training_files"), got.pop("training_files")
    assert isinstance(want_files, TrainingFiles) and isinstance(got_files, TrainingFiles)
    assert got_files.code_dir == want_files.code_dir
    assert _boot(got_files) == _boot(want_files)
    assert {k: _plain(v) for k, v in got.items()} == {k: _plain(v) for k, v in want.items()}
    assert {k: _plain(v) for k, v in from_body.fit.items()} == {
        k: _plain(v) for k, v in from_spec.fit.items()
    }


def test_what_the_estimator_cannot_say_is_noted() -> None:
    body = {
        "metadata": {"name": "j", "annotations": {"majob/submit-id": "abc"}},
        "algorithm": {
            "code_dir": "/b/code/",
            "boot_file": "/b/code/train.py",
            "engine": {"engine_name": "PyTorch", "engine_version": "v"},
            "inputs": [
                {
                    "name": "data_url",
                    "access_method": "env",
                    "remote": {"obs": {"obs_url": "/b/d/"}},
                }
            ],
        },
        "spec": {"resource": {"pool_id": "pool-1"}, "auto_stop": {"duration": 2}},
    }
    call = estimator_from_body(body)
    assert "train_instance_type" not in call.estimator
    assert call.estimator["pool_id"] == "pool-1"
    assert [n.split(" ")[0] for n in call.notes] == ["input", "auto_stop", "annotation"]


def test_an_engine_by_id_only_cannot_become_an_estimator() -> None:
    body = {"metadata": {"name": "j"}, "algorithm": {"engine": {"engine_id": "pytorch-1.8.0"}}}
    with pytest.raises(CompileError, match="given by id"):
        estimator_from_body(body)


def test_obs_paths_are_written_as_the_sdk_writes_them() -> None:
    assert obs_uri("/b/code/") == "obs://b/code/"
    assert obs_uri("obs://b/code/x.py") == "obs://b/code/x.py"

"""The Estimator call: its JSON form, and a snippet that really runs.

The snippet is exec'd against a tiny fake ``modelarts`` package written to a temp dir. The fake
records every call with the signatures the reference documents (reference §1.2-1.3), so the test
checks the *snippet* (imports, names, keyword arguments, values) against ``to_json()``; it does
not stand in for any of majob's own code.
"""

from __future__ import annotations

import ast
import sys
import textwrap
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from majob.compile import EstimatorCall, InputData, OutputData, TrainingFiles, to_estimator
from majob.errors import CompileError
from majob.spec.models import STAGES, JobSpec, Stage

LoadCase = Callable[[str], JobSpec]

FAKE_MODELARTS = {
    "__init__.py": "CALLS = []\n",
    "session.py": """
        from modelarts import CALLS

        class Session:
            def __init__(self):  # in a notebook, Session() takes no arguments
                CALLS.append(("Session", {}))
        """,
    "train_params.py": """
        class _Recorded:
            def __init__(self, **kwargs):
                self.kwargs = {k: v for k, v in kwargs.items() if v is not None}

            def as_json(self):
                return {type(self).__name__: self.kwargs}

        class TrainingFiles(_Recorded):
            def __init__(self, code_dir, boot_file=None, obs_path=None):
                super().__init__(code_dir=code_dir, boot_file=boot_file, obs_path=obs_path)

        class InputData(_Recorded):
            def __init__(self, obs_path, name, local_path=None, is_local_source=None):
                super().__init__(obs_path=obs_path, name=name, local_path=local_path,
                                 is_local_source=is_local_source)

        class OutputData(_Recorded):
            def __init__(self, obs_path, name, local_path=None, access_method=None):
                super().__init__(obs_path=obs_path, name=name, local_path=local_path,
                                 access_method=access_method)
        """,
    "estimatorV2.py": """
        from modelarts import CALLS
        from modelarts.session import Session

        class _Job:
            job_id = "fake-job-id"

        class Estimator:
            def __init__(self, session, training_files=None, outputs=None, parameters=None,
                         framework_type=None, framework_version=None, train_instance_type=None,
                         train_instance_count=None, log_url=None, env_variables=None,
                         working_dir=None, job_description=None, user_image_url=None,
                         user_command=None, local_code_dir=None, pool_id=None):
                assert isinstance(session, Session)
                kwargs = dict(locals())
                del kwargs["self"], kwargs["session"]
                CALLS.append(("Estimator", {k: v for k, v in kwargs.items() if v is not None}))

            def fit(self, inputs=None, wait=False, job_name=None):
                CALLS.append(("fit", {"inputs": inputs, "wait": wait, "job_name": job_name}))
                return _Job()
        """,
}


@pytest.fixture
def fake_modelarts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    package = tmp_path / "modelarts"
    package.mkdir()
    for name, source in FAKE_MODELARTS.items():
        (package / name).write_text(textwrap.dedent(source), encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    yield
    for module in [m for m in sys.modules if m == "modelarts" or m.startswith("modelarts.")]:
        del sys.modules[module]


def _recorded(value: Any) -> Any:
    """A recorded value in the JSON form: fake SDK objects as {"Class": {kwargs}}."""
    if hasattr(value, "as_json"):
        return value.as_json()
    if isinstance(value, list):
        return [_recorded(v) for v in value]
    if isinstance(value, dict):
        return {k: _recorded(v) for k, v in value.items()}
    return value


def _run_snippet(call: EstimatorCall, capsys: pytest.CaptureFixture[str]) -> list[Any]:
    import modelarts  # the fake, from the temp dir

    exec(compile(call.to_python(), "<snippet>", "exec"), {})
    assert capsys.readouterr().out == "fake-job-id\n"
    return list(modelarts.CALLS)


@pytest.mark.parametrize("stage", STAGES)
def test_snippet_runs_and_makes_exactly_the_json_call(
    case: str,
    stage: Stage,
    load_case: LoadCase,
    fake_modelarts: None,
    capsys: pytest.CaptureFixture[str],
) -> None:
    call = to_estimator(load_case(case), stage)
    calls = _run_snippet(call, capsys)
    expected = call.to_json()
    fit = {"inputs": None, **expected["fit"]}  # the snippet leaves inputs out when there are none
    assert [name for name, _ in calls] == ["Session", "Estimator", "fit"]
    assert _recorded(calls[1][1]) == expected["estimator"]
    assert _recorded(calls[2][1]) == fit


def test_snippet_is_valid_python_with_the_documented_imports(
    case: str, load_case: LoadCase
) -> None:
    tree = ast.parse(to_estimator(load_case(case)).to_python())
    imports = [
        (node.module, [a.name for a in node.names])
        for node in tree.body
        if isinstance(node, ast.ImportFrom)
    ]
    assert imports == [
        ("modelarts.session", ["Session"]),
        ("modelarts.train_params", ["TrainingFiles", "InputData", "OutputData"]),
        ("modelarts.estimatorV2", ["Estimator"]),
    ]


def test_sdk_objects_render_both_ways() -> None:
    files = TrainingFiles(code_dir="obs://b-1/code/", boot_file="train.py")
    assert files.to_json() == {
        "TrainingFiles": {"code_dir": "obs://b-1/code/", "boot_file": "train.py"}
    }
    assert files.to_python() == "TrainingFiles(code_dir='obs://b-1/code/', boot_file='train.py')"
    data = InputData(obs_path="obs://b-1/d/", name="data_url")
    assert data.to_python() == "InputData(obs_path='obs://b-1/d/', name='data_url')"
    out = OutputData(obs_path="obs://b-1/o/", name="out", access_method="env")
    assert out.to_json() == {
        "OutputData": {"obs_path": "obs://b-1/o/", "name": "out", "access_method": "env"}
    }


def _spec(**changes: Any) -> JobSpec:
    data: dict[str, Any] = {
        "name": "job",
        "code": {"boot_file": "train.py", "obs": "obs://bucket-a/job/code/"},
        "image": {"engine": "PyTorch", "version": "pytorch_1.8.0-cuda_10.2-py_3.7"},
        "resources": {"flavor": "modelarts.vm.cpu.8u"},
    }
    for key, value in changes.items():
        data[key] = value
    return JobSpec.model_validate(data)


def test_values_are_strings_and_paths_use_the_obs_scheme() -> None:
    spec = _spec(
        hyperparameters={"flag": True, "n": 3, "lr": 0.5, "s": "x"},
        env={"A": False},
        log="/bucket-a/job/log/",
        inputs=[{"name": "data_url", "obs": "/bucket-a/data/"}],
    )
    data = to_estimator(spec).to_json()
    assert data["estimator"]["parameters"] == [
        {"name": "flag", "value": "true"},
        {"name": "n", "value": "3"},
        {"name": "lr", "value": "0.5"},
        {"name": "s", "value": "x"},
    ]
    assert data["estimator"]["env_variables"] == {"A": "false"}
    assert data["estimator"]["log_url"] == "obs://bucket-a/job/log/"
    assert data["fit"]["inputs"] == [
        {"InputData": {"obs_path": "obs://bucket-a/data/", "name": "data_url"}}
    ]


def test_boot_file_is_relative_to_code_dir() -> None:
    spec = _spec(code={"boot_file": "src/main.py", "obs": "obs://bucket-a/job/code/"})
    files = to_estimator(spec).estimator["training_files"]
    assert files == TrainingFiles(code_dir="obs://bucket-a/job/code/", boot_file="src/main.py")


def test_stage_names_and_overrides() -> None:
    spec = _spec(
        name="x" * 64,
        hyperparameters={"epochs": 10},
        stages={"debug": {"nodes": 2, "hyperparameters": {"epochs": 1}, "timeout": "10m"}},
    )
    debug = to_estimator(spec, "debug")
    assert debug.job_name == "x" * 58 + "-debug"
    assert debug.estimator["train_instance_count"] == 2
    assert debug.estimator["parameters"] == [{"name": "epochs", "value": "1"}]
    assert any("auto_stop after 1 h" in note for note in debug.notes)
    formal = to_estimator(spec)
    assert formal.job_name == "x" * 64
    assert formal.notes == ()


def test_missing_code_obs_is_a_compile_error_with_a_hint() -> None:
    spec = _spec(code={"boot_file": "train.py"})
    with pytest.raises(CompileError) as info:
        to_estimator(spec)
    assert "code.obs is not set" in info.value.message
    assert info.value.hint is not None and "default bucket" in info.value.hint

"""Pre-flight checks that need no cloud: did-you-mean, offerings, the boot file, the name."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from majob.service.offerings import Offerings
from majob.service.preflight import (
    Findings,
    check_boot_file,
    check_inputs,
    check_name,
    check_offerings,
)
from majob.spec.models import JobSpec
from majob.testing import FAKE_BUCKET
from majob.text import did_you_mean

PYTORCH = "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"


def spec(code_dir: Path, **changes: Any) -> JobSpec:
    data: dict[str, Any] = {
        "name": "mnist",
        "code": {"dir": str(code_dir), "boot_file": "train.py"},
        "image": {"engine": "PyTorch", "version": PYTORCH},
        "resources": {"flavor": "modelarts.vm.cpu.8u", "nodes": 1},
    }
    for key, value in changes.items():
        section, _, field = key.partition("__")
        data[section] = {**data[section], field: value}
    return JobSpec.model_validate(data)


def offerings(service: Any) -> Offerings:
    return Offerings(tuple(service.flavors()), tuple(service.engines()))


@pytest.mark.parametrize(
    ("word", "choices", "expected"),
    [
        ("Pytorch", ["PyTorch", "TensorFlow"], "did you mean 'PyTorch'?"),
        (
            "modelarts.vm.cpu.9u",
            ["modelarts.vm.cpu.8u", "x"],
            "did you mean 'modelarts.vm.cpu.8u'?",
        ),
        ("banana", ["PyTorch", "TensorFlow"], "choose one of: PyTorch, TensorFlow"),
        ("x", [], "the service lists none"),
    ],
)
def test_did_you_mean(word: str, choices: list[str], expected: str) -> None:
    assert did_you_mean(word, choices) == expected


@pytest.mark.parametrize(
    ("changes", "expected"),
    [
        (
            {"image__engine": "Pytorch"},
            "image.engine: 'Pytorch' is not an engine of this service; did you mean 'PyTorch'?",
        ),
        (
            {"image__engine": "banana"},
            "image.engine: 'banana' is not an engine of this service; choose one of: Ascend-Powered-Engine, PyTorch",
        ),
        (
            {"image__version": "pytorch_99"},
            f"image.version: 'pytorch_99' is not a version of PyTorch; choose one of: {PYTORCH}",
        ),
        (
            {"resources__flavor": "modelarts.vm.cpu.9u"},
            "resources.flavor: 'modelarts.vm.cpu.9u' is not a flavor of this service (ModelArts.2763); did you mean 'modelarts.vm.cpu.8u'?",
        ),
        (
            {"resources__flavor": "modelarts.vm.cpu.2u", "resources__nodes": 2},
            "resources.nodes: 2 nodes, but flavor modelarts.vm.cpu.2u allows at most 1",
        ),
    ],
)
def test_offerings_problems(
    tmp_path: Path, service: Any, changes: dict[str, Any], expected: str
) -> None:
    findings = Findings()
    check_offerings(spec(tmp_path, **changes), offerings(service), findings)
    assert len(findings.problems) == 1
    assert findings.problems[0].startswith(expected)


def test_ascend_flavor_needs_an_ascend_engine(tmp_path: Path, service: Any) -> None:
    findings = Findings()
    job = spec(tmp_path, resources__flavor="modelarts.bm.snt9.xlarge.8")
    check_offerings(job, offerings(service), findings)
    assert findings.problems == [
        f"image.engine: flavor modelarts.bm.snt9.xlarge.8 has Ascend NPUs, but engine PyTorch "
        f"{PYTORCH} is not an Ascend engine; use Ascend-Powered-Engine"
    ]


def test_a_valid_spec_has_no_offerings_problem(tmp_path: Path, service: Any) -> None:
    findings = Findings()
    check_offerings(spec(tmp_path), offerings(service), findings)
    assert findings.problems == []


def test_a_boot_file_left_out_of_the_upload(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    findings = Findings()
    check_boot_file(spec(tmp_path), ["other.py"], findings)
    assert "'train.py' is not in the uploaded code" in findings.problems[0]


def test_a_boot_file_that_does_not_compile(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("x = 1\ndef broken(:\n")
    findings = Findings()
    check_boot_file(spec(tmp_path), ["train.py"], findings)
    assert findings.problems[0].startswith(
        f"code.boot_file: {tmp_path / 'train.py'}:2: does not compile"
    )


def test_a_boot_file_that_compiles(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text("print('hi')\n")
    findings = Findings()
    check_boot_file(spec(tmp_path), ["train.py"], findings)
    assert findings.problems == []


def test_a_running_job_with_the_name_is_named(service: Any) -> None:
    job_id = service.add_job("mnist-debug", "Running")
    service.add_job("mnist-debug-2", "Running")
    findings = Findings()
    check_name("mnist-debug", service, findings)
    assert findings.problems == [
        f"name: job name 'mnist-debug' is taken by job {job_id} (Running); ModelArts.2751 "
        f"would refuse it; stop it first (majob stop {job_id}; the next submit is then "
        "numbered) or rename this job (--set name=...)"
    ]


def test_an_ended_job_holds_its_name_until_deleted(service: Any) -> None:
    # ModelArts creates a job only when its name does not exist (ValidateTrainingJobName).
    job_id = service.add_job("mnist-debug", "Completed")
    findings = Findings()
    check_name("mnist-debug", service, findings)
    assert findings.problems == [
        f"name: job name 'mnist-debug' is taken by job {job_id} (Completed); ModelArts.2751 "
        f"would refuse it; delete it (majob delete {job_id}) or rename this job (--set name=...)"
    ]


def test_the_name_is_found_past_the_first_page_of_the_search(service: Any) -> None:
    # The search matches part of a name: 60 newer jobs whose names hold it come first.
    for index in range(60):
        service.add_job(f"mnist-debug-{index}", "Completed")
    job_id = service.add_job("mnist-debug", "Failed")
    findings = Findings()
    check_name("mnist-debug", service, findings)
    assert len(findings.problems) == 1 and f"taken by job {job_id} (Failed)" in findings.problems[0]


def test_a_check_that_cannot_run_is_a_problem_line(service: Any) -> None:
    from majob.errors import ServiceUnreachable

    service.search_failures.append(ServiceUnreachable("cannot reach ModelArts", hint="check it"))
    findings = Findings()
    check_name("x", service, findings)
    assert findings.problems == ["name: cannot reach ModelArts; check it"]


def test_folder_markers_are_not_data(tmp_path: Path, obs_store: Any) -> None:
    # The zero-byte "dir/" objects a console's "create folder" leaves, however deep.
    obs_store.put_bytes(FAKE_BUCKET, "data/", b"")
    obs_store.put_bytes(FAKE_BUCKET, "data/train/", b"")
    job = JobSpec.model_validate(
        {
            **spec(tmp_path).model_dump(exclude={"inputs"}),
            "inputs": [{"name": "data_url", "obs": f"obs://{FAKE_BUCKET}/data/"}],
        }
    )
    findings = Findings()
    check_inputs(job, obs_store, findings, upload_inputs=False)
    assert findings.problems == [
        f"inputs[0] data_url: obs://{FAKE_BUCKET}/data/ holds no data; upload the data there "
        f"first (majob obs sync DIR obs://{FAKE_BUCKET}/data/)"
    ]
    obs_store.put_bytes(FAKE_BUCKET, "data/train/part-0", b"x")
    findings = Findings()
    check_inputs(job, obs_store, findings, upload_inputs=False)
    assert findings.problems == []


def test_a_dedicated_cpu_pool_takes_no_flavor_but_no_ascend_engine(
    tmp_path: Path, service: Any
) -> None:
    data = {"flavor": None, "pool": "pool-cpu-1", "nodes": 1}
    findings = Findings()
    check_offerings(spec(tmp_path, **{f"resources__{k}": v for k, v in data.items()}),
                    offerings(service), findings)  # fmt: skip
    assert findings.problems == []
    ascend = "mindspore_1.6.0-cann_5.0.3.6-py_3.7-euler_2.8.3-aarch64"
    job = JobSpec.model_validate(
        {
            "name": "npu",
            "code": {"dir": str(tmp_path), "boot_file": "train.py"},
            "image": {"engine": "Ascend-Powered-Engine", "version": ascend},
            "resources": {"pool": "pool-cpu-1"},
        }
    )
    check_offerings(job, offerings(service), findings)
    assert len(findings.problems) == 1
    assert findings.problems[0].startswith("resources.pool: a dedicated CPU pool (no ")


def test_jobs_a_search_found_already_are_read_not_searched_again(service: Any) -> None:
    job_id = service.add_job("mnist-debug", "Running")
    known = service.search()[0]
    service.search_failures.append(AssertionError("searched again"))
    findings = Findings()
    check_name("mnist-debug", service, findings, known)
    assert (
        len(findings.problems) == 1 and f"taken by job {job_id} (Running)" in findings.problems[0]
    )
    check_name("mnist-debug-2", service, findings := Findings(), known)
    assert findings.problems == []

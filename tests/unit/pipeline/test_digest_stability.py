"""A spec that does not use a field added later keeps the digest it was recorded with: an
upgrade of majob must not reopen every gate of an existing ledger."""

from __future__ import annotations

from typing import Any

from majob.spec.digest import normalised_spec, spec_digest
from majob.spec.models import JobSpec

SPEC: dict[str, Any] = {
    "name": "pinned",
    "code": {"dir": "code", "boot_file": "train.py", "obs": "obs://my-bucket/pinned/code/"},
    "image": {
        "engine": "PyTorch",
        "version": "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
    },
    "resources": {"flavor": "modelarts.vm.cpu.8u"},
    "outputs": [{"name": "train_url", "obs": "obs://my-bucket/pinned/out/"}],
    "hyperparameters": {"epochs": 2},
    "metrics": {"loss": "loss=([0-9.]+)"},
    "expect": {"metrics": {"loss": "< 2.0"}},
}
# Taken with majob before fault_tolerance, expect.resumes and sweep existed (commit 03f524f).
RECORDED = "8fb9bfb8ac90275cbb903a52ff6372c77c79c140bc3d671c5e3bc75b3fcbe626"


def test_a_spec_without_the_later_fields_keeps_its_recorded_digest() -> None:
    assert spec_digest(JobSpec.model_validate(SPEC)) == RECORDED


def test_the_later_fields_count_once_they_are_set() -> None:
    fault_tolerance = {"retries": 2, "checkpoints": "train_url/ckpt/"}
    with_restarts = JobSpec.model_validate({**SPEC, "fault_tolerance": fault_tolerance})
    resumes = JobSpec.model_validate({**SPEC, "expect": {**SPEC["expect"], "resumes": True}})
    assert normalised_spec(with_restarts)["fault_tolerance"]["retries"] == 2
    assert normalised_spec(resumes)["expect"]["resumes"] is True
    assert len({RECORDED, spec_digest(with_restarts), spec_digest(resumes)}) == 3

"""The example specs, compiled by majob exactly as it would submit them, run in the emulator."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from huaweicloudsdkmodelarts.v1.model import CreateTrainingJobRequest

from majob.compile.rest import to_rest_body
from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from tests.e2e.emulator.conftest import Harness

ROOT = Path(__file__).resolve().parents[3]


def upload_inputs(harness: Harness, spec: JobSpec) -> None:
    """The code dir and each input's local stand-in, where the spec says they live on OBS."""
    assert spec.code.obs is not None
    code = Path(spec.code.dir)
    for path in sorted(p for p in code.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        harness.put(spec.code.obs.key + path.relative_to(code).as_posix(), path.read_bytes())
    for channel in spec.inputs:
        assert channel.local is not None
        local = Path(channel.local)
        for path in sorted(p for p in local.rglob("*") if p.is_file()):
            harness.put(channel.obs.key + path.relative_to(local).as_posix(), path.read_bytes())


def test_every_example_spec_is_accepted(harness: Harness) -> None:
    """The flavors and engines the example specs name are in the catalogue; their debug bodies
    pass the service's validation."""
    harness.cloud.modelarts.add_job_fault(delays={"Creating": 600})  # validate, start nothing
    for path in sorted((ROOT / "job_specs").glob("*.yaml")):
        spec = load_spec(path)
        upload_inputs(harness, spec)
        body = to_rest_body(spec, "debug")
        created = harness.client.create_training_job(CreateTrainingJobRequest(body=body))
        assert created.metadata.name == body["metadata"]["name"], path.name


@pytest.mark.slow
def test_the_mnist_example_trains_as_an_emulated_job(harness: Harness) -> None:
    spec = load_spec(
        ROOT / "job_specs" / "mnist.yaml", overrides=["stages.debug.hyperparameters.epochs=1"]
    )
    upload_inputs(harness, spec)
    created = harness.client.create_training_job(
        CreateTrainingJobRequest(body=to_rest_body(spec, "debug"))
    )
    job = harness.wait(created.metadata.id, timeout=240)
    assert job.status.phase == "Completed", job.status
    output = spec.at_stage("debug").outputs[0].obs.key  # the debug stage's own folder
    assert output.endswith("/debug/")
    metrics = json.loads(harness.read(output + "metrics.json"))
    assert metrics["epochs"] == 1 and metrics["test_accuracy"] > 0.5
    assert harness.read(output + "model.pth")
    assert spec.log is not None
    log = harness.read(f"{spec.log.key}modelarts-job-{created.metadata.id}-worker-0.log")
    assert b"final test accuracy" in log

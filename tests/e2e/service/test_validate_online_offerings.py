"""``majob validate --online`` checks the flavor and the engine against the service's own list
(here the emulator's): an unknown one is an error with did-you-mean and exit 2, where the
offline ``majob validate`` only warns (tests/cli/test_validate_catalogue.py)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud

runner = CliRunner()


def test_online_an_unknown_flavor_and_engine_are_errors(
    project: Path, cloud: EmulatedCloud, monkeypatch
) -> None:
    monkeypatch.setenv("MAJOB_CACHE_DIR", str(project / "cache"))
    spec = str(project / "spec.yaml")
    wrong = ["--set", "resources.flavor=modelarts.vm.cpu.9u", "--set", "image.engine=Pytorch"]
    offline = runner.invoke(app, ["validate", spec, *wrong])
    assert offline.exit_code == 0, offline.output
    assert offline.stderr.count("warning: ") == 2
    online = runner.invoke(app, ["validate", spec, "--online", "--profile", "emulator", *wrong])
    assert online.exit_code == 2, online.output
    errors = online.stderr.splitlines()
    assert (
        f"error: {spec}: resources.flavor: 'modelarts.vm.cpu.9u' is not a flavor of this service "
        "(ModelArts.2763); did you mean 'modelarts.vm.cpu.8u'? (majob flavors lists them)"
    ) in errors
    assert (
        f"error: {spec}: image.engine: 'Pytorch' is not an engine of this service; did you mean "
        "'PyTorch'? (majob engines lists them)"
    ) in errors
    assert "warning:" not in online.stderr  # online, the service is the judge

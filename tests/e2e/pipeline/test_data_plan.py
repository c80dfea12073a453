"""``majob data plan`` against the emulated cloud: one listing sizes each input, the /cache of
the flavor comes from majob's catalogue or --cache-size, and the verdict decides the exit."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from majob.storage.obs import ObsObjectStore

runner = CliRunner()


def _put_inputs(store: ObsObjectStore) -> None:
    store.create_bucket("majob-demo")
    store.put_bytes("majob-demo", "tiny/data/in.txt", b"2.0")
    store.put_bytes("majob-demo", "tiny/data/big.bin", b"x" * 5000)
    store.put_bytes("majob-demo", "tiny/data/sub/", b"")  # a folder marker is not a file


def test_the_plan_sizes_the_inputs_and_keeps_them_on_obs(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore
) -> None:
    _put_inputs(store)
    shown = runner.invoke(app, ["data", "plan", "tiny.yaml", "--profile", "emulator"])
    assert shown.exit_code == 0, shown.output
    assert "recommendation: keep the inputs on OBS" in shown.output
    assert "/cache of modelarts.vm.cpu.8u: 100 GB (flavor_info.disk of majob's catalogue)" in (
        shown.output
    )
    answer = runner.invoke(
        app, ["data", "plan", "tiny.yaml", "--profile", "emulator", "--format", "json"]
    )
    plan = json.loads(answer.output)
    (data,) = plan["inputs"]
    assert (data["objects"], data["total"], data["largest"]) == (2, 5003, 5000)
    assert plan["per_node_bytes"] == 5003 and plan["verdict"] == "obs"
    assert plan["epochs"] is None  # tiny.yaml sets no epochs (its script's default is 3)
    with_epochs = runner.invoke(
        app,
        ["data", "plan", "tiny.yaml", "--profile", "emulator", "--set", "hyperparameters.epochs=4"],
    )
    assert "over 4 epochs each node reads 20 kB (20 kB for the job)" in with_epochs.output


def test_inputs_larger_than_the_cache_cannot_fit_and_exit_1(
    project: Path, cloud: EmulatedCloud, store: ObsObjectStore
) -> None:
    _put_inputs(store)
    args = ["data", "plan", "tiny.yaml", "--profile", "emulator", "--cache-size", "4KB"]
    shown = runner.invoke(app, [*args, "--set", "resources.nodes=2"])
    assert shown.exit_code == 1, shown.output
    assert "the inputs cannot fit the /cache" in shown.output
    assert "each of 2 node(s) downloads 5 kB (2 objects)" in shown.output
    assert "4 kB (given with --cache-size)" in shown.output


def test_a_bad_size_and_a_missing_bucket_are_one_message_each(
    project: Path, cloud: EmulatedCloud
) -> None:
    bad = runner.invoke(
        app, ["data", "plan", "tiny.yaml", "--profile", "emulator", "--cache-size", "lots"]
    )
    assert bad.exit_code == 2 and "'lots' is not a size" in bad.output
    empty = runner.invoke(app, ["data", "plan", "tiny.yaml", "--profile", "emulator"])
    assert empty.exit_code == 2, empty.output
    assert "input data_url (obs://majob-demo/tiny/data/) holds no objects" in empty.output
    elsewhere = "inputs.data_url.obs=obs://no-such-bucket-here/data/"
    missing = runner.invoke(
        app, ["data", "plan", "tiny.yaml", "--profile", "emulator", "--set", elsewhere]
    )
    assert missing.exit_code != 0 and "Traceback" not in missing.output
    assert "no-such-bucket-here" in missing.output

from __future__ import annotations

from pathlib import Path

import pytest

from majob.errors import ConfigError, SpecError
from majob.spec.envrefs import FromEnviron, Redactor
from majob.spec.load import load_spec, parse_override
from majob.spec.models import JobSpec


def _problems(path: Path, **kwargs: object) -> list[str]:
    with pytest.raises(SpecError) as caught:
        load_spec(path, **kwargs)  # type: ignore[arg-type]
    return [f"{p.line}:{p.col} {p.path}: {p.message}" for p in caught.value.problems]


def test_valid_spec_keeps_types_and_resolves_paths(project: Path) -> None:
    spec = load_spec(project / "spec.yaml")
    assert isinstance(spec, JobSpec)
    assert spec.hyperparameters == {"epochs": 2, "lr": 0.001, "amp": False, "arch": "resnet18"}
    assert type(spec.hyperparameters["amp"]) is bool
    assert spec.code.dir == str(project / "code")
    assert spec.inputs[0].local == str(project / "data")
    assert spec.code_dir_name() == "code"


def test_stage_overrides_merge(project: Path) -> None:
    spec = load_spec(project / "spec.yaml")
    local = spec.at_stage("local")
    assert local.resources.nodes == 2
    assert local.hyperparameters["epochs"] == 1
    assert local.hyperparameters["lr"] == 0.001
    assert spec.timeout("local") == 600
    assert spec.at_stage("debug").resources.flavor == "modelarts.vm.cpu.2u"
    assert spec.at_stage("formal") is spec


def test_set_overrides_any_field_and_selects_items_by_name(project: Path) -> None:
    spec = load_spec(
        project / "spec.yaml",
        overrides=[
            "resources.nodes=3",
            "hyperparameters.lr=0.1",
            "hyperparameters.amp=true",
            "inputs.data_url.obs=obs://other-bucket/d/",
            "outputs[0].access_method=env",
            "description=",
        ],
    )
    assert spec.resources.nodes == 3
    assert spec.hyperparameters["lr"] == 0.1
    assert spec.hyperparameters["amp"] is True
    assert spec.inputs[0].obs.bucket == "other-bucket"
    assert spec.outputs[0].access_method == "env"
    assert spec.description == ""


def test_bad_override_is_named(project: Path) -> None:
    assert _problems(project / "spec.yaml", overrides=["resources.nodes=0"]) == [
        "0:0 resources.nodes: must be greater than or equal to 1"
    ]


def test_parse_override_reads_yaml_values() -> None:
    assert parse_override("a.b[2].c=1e-3") == (["a", "b", "2", "c"], 0.001)
    assert parse_override("x=[1, 2]") == (["x"], [1, 2])
    with pytest.raises(ValueError, match="PATH=VALUE"):
        parse_override("novalue")


def test_env_refs_expand_except_in_the_container_command(project: Path) -> None:
    text = (project / "spec.yaml").read_text()
    text = text.replace("my-bucket/data/", "${BUCKET}/data/").replace(
        "  arch: resnet18", "  arch: $${LITERAL}"
    )
    (project / "spec.yaml").write_text(text)
    spec = load_spec(project / "spec.yaml", environ={"BUCKET": "env-bucket"})
    assert spec.inputs[0].obs.uri == "obs://env-bucket/data/"
    assert spec.hyperparameters["arch"] == "${LITERAL}"
    assert _problems(project / "spec.yaml", environ={}) == [
        "13:10 inputs[0].obs: environment variable BUCKET is not set (export it, or write "
        "$${BUCKET} for a literal)"
    ]


def test_values_from_the_environment_into_the_job_are_remembered(project: Path) -> None:
    text = (project / "spec.yaml").read_text()
    text = text.replace("my-bucket/data/", "${BUCKET}/data/")
    text = text.replace("  arch: resnet18", "  arch: resnet18\n  token: 'Bearer ${TOKEN}'")
    text = text.replace("hyperparameters: {epochs: 1}", "hyperparameters: {epochs: '${EPOCHS}'}")
    text += "env:\n  API_KEY: ${KEY}\n"
    (project / "spec.yaml").write_text(text)
    environ = {"BUCKET": "env-bucket", "TOKEN": "tok-123456", "EPOCHS": "3", "KEY": "k-7890"}
    spec = load_spec(project / "spec.yaml", environ=environ)
    # A bucket is a location, not a secret: only what reaches the job as a value is masked.
    assert spec.from_environ == FromEnviron(
        frozenset(
            {("hyperparameters", "token"), ("hyperparameters", "epochs"), ("env", "API_KEY")}
        ),
        frozenset({"tok-123456", "3", "k-7890"}),
    )
    assert spec.at_stage("local").from_environ == spec.from_environ
    redactor = Redactor(spec.from_environ)
    # "3" is too short to mask in free text (it would garble every number); whole fields are.
    assert redactor.text("epoch 3: Bearer tok-123456 k-7890") == "epoch 3: Bearer *** ***"
    assert redactor.raw(b"tok-123456\n") == b"***\n"
    shown = spec.masked()
    assert shown.hyperparameters["token"] == "***" and shown.env == {"API_KEY": "***"}
    assert shown.stages.get("local").hyperparameters == {"epochs": "***"}  # type: ignore[union-attr]
    assert shown.hyperparameters["arch"] == "resnet18"


def test_custom_command_keeps_container_variables(project: Path) -> None:
    text = (
        (project / "spec.yaml")
        .read_text()
        .replace(
            "  engine: PyTorch\n  version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64\n",
            "  swr: swr.cn-north-4.myhuaweicloud.com/org/img:1\n"
            "  command: cd ${MA_JOB_DIR}/code && python train.py\n",
        )
    )
    (project / "spec.yaml").write_text(text)
    spec = load_spec(project / "spec.yaml", environ={})
    assert spec.image.command == "cd ${MA_JOB_DIR}/code && python train.py"


def test_all_problems_reported_at_once(project: Path) -> None:
    text = (project / "spec.yaml").read_text()
    text = text.replace("  flavor: modelarts.vm.cpu.8u", "  flavour: modelarts.vm.cpu.8u")
    text = text.replace("obs://my-bucket/out/", "obs://my-bucket/out")
    text = text.replace("  epochs: 2", "  epochs: {a: 1}")
    (project / "spec.yaml").write_text(text)
    assert _problems(project / "spec.yaml") == [
        "10:3 resources.flavour: unknown key 'flavour'; did you mean 'flavor'?",
        "17:10 outputs[0].obs: obs://my-bucket/out must be a directory: end it with '/' "
        "(obs://my-bucket/out/)",
        "20:11 hyperparameters.epochs: must be a string, a number or a boolean",
    ]


def test_profile_fills_flavor_and_code_obs(project: Path) -> None:
    (project / "config" / "profiles.yaml").write_text(
        "default:\n  flavor: modelarts.vm.cpu.2u\n"
        "team:\n  bucket: team-bucket\n  flavor: modelarts.vm.cpu.8u\n  region: cn-north-4\n"
    )
    text = (project / "spec.yaml").read_text()
    text = text.replace("  obs: obs://my-bucket/majob/demo/code/\n", "")
    text = text.replace("resources:\n  flavor: modelarts.vm.cpu.8u\n", "resources: {nodes: 1}\n")
    (project / "spec.yaml").write_text(text)
    assert load_spec(project / "spec.yaml").resources.flavor == "modelarts.vm.cpu.2u"
    spec = load_spec(project / "spec.yaml", profile="team")
    assert spec.code.obs is not None
    assert spec.code.obs.uri == "obs://team-bucket/majob/demo/code/"
    with pytest.raises(ConfigError, match="no profile 'nope'"):
        load_spec(project / "spec.yaml", profile="nope")


def test_profile_errors_are_config_errors(project: Path) -> None:
    (project / "config" / "profiles.yaml").write_text("default:\n  bucket: Bad_Bucket\n")
    with pytest.raises(ConfigError, match="bucket name 'Bad_Bucket'"):
        load_spec(project / "spec.yaml")
    (project / "config" / "profiles.yaml").write_text("default:\n  colour: blue\n")
    with pytest.raises(ConfigError, match="colour"):
        load_spec(project / "spec.yaml")


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(tmp_path / "nope.yaml")
    assert caught.value.lines() == [f"{tmp_path / 'nope.yaml'}: file not found"]

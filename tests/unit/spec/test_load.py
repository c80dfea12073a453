from __future__ import annotations

import os
import threading
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from majob.errors import ConfigError, SpecError
from majob.spec.envrefs import FromEnviron
from majob.spec.load import load_spec
from majob.spec.models import JobSpec
from majob.spec.overrides import parse_override


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
    formal = spec.at_stage("formal")  # no overrides: the spec, its outputs in formal's folders
    assert formal.model_dump(exclude={"outputs"}) == spec.model_dump(exclude={"outputs"})
    assert [o.obs.uri for o in formal.outputs] == [o.obs.join("formal/").uri for o in spec.outputs]


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
        (
            (("env", "API_KEY"), "${KEY}"),
            (("hyperparameters", "token"), "Bearer ${TOKEN}"),
            (("stages", "local", "hyperparameters", "epochs"), "${EPOCHS}"),
        ),
    )
    masker = spec.from_environ.masker()
    # "3" is too short to mask in free text (it would garble every number); whole values are.
    assert masker.text("epoch 3: Bearer tok-123456 k-7890") == "epoch 3: Bearer *** ***"
    assert masker.raw(b"tok-123456\n") == b"***\n"
    body = {"parameters": [{"name": "epochs", "value": "3"}], "token": "Bearer tok-123456"}
    assert masker.data(body) == {
        "parameters": [{"name": "epochs", "value": "***"}],
        "token": "Bearer ***",
    }
    local = spec.at_stage("local")
    assert local.from_environ.fields == spec.from_environ.fields
    assert local.hyperparameters["epochs"] == "3"
    assert local.as_written().hyperparameters["epochs"] == "${EPOCHS}"


def test_the_spec_as_written_holds_references_where_the_job_got_values(project: Path) -> None:
    text = (project / "spec.yaml").read_text()
    text = text.replace("my-bucket/data/", "${BUCKET}/data/")
    text = text.replace("  arch: resnet18", "  arch: resnet18\n  token: 'Bearer ${TOKEN}'")
    text += "env:\n  API_KEY: ${KEY}\n  PLAIN: 'yes'\n"
    (project / "spec.yaml").write_text(text)
    environ = {"BUCKET": "env-bucket", "TOKEN": "tok-123456", "KEY": "k-7890"}
    written = load_spec(project / "spec.yaml", environ=environ).as_written()
    assert written.hyperparameters["token"] == "Bearer ${TOKEN}"
    assert written.env == {"API_KEY": "${KEY}", "PLAIN": "yes"}
    assert written.hyperparameters["arch"] == "resnet18"
    assert written.inputs[0].obs.uri == "obs://env-bucket/data/"  # a location stays resolved
    # A --set replaces the reference: its value is written on the command line, not a secret.
    overridden = load_spec(
        project / "spec.yaml", environ=environ, overrides=["hyperparameters.token=abc"]
    )
    assert overridden.as_written().hyperparameters["token"] == "abc"
    assert overridden.as_written().env["API_KEY"] == "${KEY}"


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
    pooled = text.replace("resources: {nodes: 1}\n", "resources: {pool: pool-cpu-1}\n")
    (project / "spec.yaml").write_text(pooled)  # a dedicated CPU pool: no default flavor
    assert load_spec(project / "spec.yaml").resources.flavor is None
    (project / "spec.yaml").write_text(text)
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


# -- hostile and odd input -----------------------------------------------------------------------


def test_set_through_a_single_value_is_an_error_about_the_set(project: Path) -> None:
    spec = project / "spec.yaml"
    assert _problems(spec, overrides=["hyperparameters.lr.max=0.1"]) == [
        "0:0 hyperparameters.lr: is a single value (0.001), so it has no 'max'; "
        "set hyperparameters.lr=VALUE instead"
    ]
    assert _problems(spec, overrides=["inputs[0].name.first=x"]) == [
        "0:0 inputs[0].name: is a single value ('data_url'), so it has no 'first'; "
        "set inputs[0].name=VALUE instead"
    ]
    assert _problems(spec, overrides=["inputs[5].local=/tmp", "outputs.test_url.local=/tmp"]) == [
        "0:0 inputs[5]: no item '5': use an index 0..0 or an item's name",
        "0:0 outputs.test_url: no item 'test_url': use an index 0..0 or an item's name",
    ]
    with pytest.raises(SpecError) as caught:
        load_spec(spec, overrides=["hyperparameters.lr.max=0.1"])
    assert str(caught.value) == (
        "--set 'hyperparameters.lr.max=0.1': hyperparameters.lr: is a single value (0.001), "
        "so it has no 'max'; set hyperparameters.lr=VALUE instead"
    )


def test_a_misspelt_key_a_set_adds_is_reported_against_the_set(project: Path) -> None:
    with pytest.raises(SpecError) as caught:
        load_spec(project / "spec.yaml", overrides=["hyperparameter.lr=0.1"])
    assert str(caught.value) == (
        "--set 'hyperparameter.lr=0.1': hyperparameter: unknown key 'hyperparameter'; "
        "did you mean 'hyperparameters'?"
    )


def test_set_creates_what_is_absent_or_empty(project: Path) -> None:
    text = (project / "spec.yaml").read_text().replace("  debug:\n", "  formal:\n  debug:\n")
    (project / "spec.yaml").write_text(text)
    spec = load_spec(project / "spec.yaml", overrides=["stages.formal.nodes=4"])
    assert spec.at_stage("formal").resources.nodes == 4


def test_set_values_are_read_as_safely_as_the_file(project: Path, tmp_path: Path) -> None:
    marker = tmp_path / "was-run"
    problems = _problems(
        project / "spec.yaml",
        overrides=[f"description=!!python/object/apply:os.system ['touch {marker}']"],
    )
    assert problems == [
        f"0:0 : value \"!!python/object/apply:os.system ['touch {marker}']\": tag "
        "!!python/object/apply:os.system is not allowed; a job spec takes plain strings, "
        "numbers, booleans, lists and mappings"
    ]
    assert not marker.exists()
    laughs = ['&l0 ["lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol", "lol"]']
    laughs += [f"&l{i} [{', '.join([f'*l{i - 1}'] * 9)}]" for i in range(1, 10)]
    problems = _problems(project / "spec.yaml", overrides=[f"env.X=[{', '.join(laughs)}]"])
    assert len(problems) == 1
    assert "aliases expand to more than 10000 values" in problems[0]


def test_spec_error_str_carries_every_line_and_no_pydantic_chain(project: Path) -> None:
    text = (project / "spec.yaml").read_text()
    text = text.replace("  lr: 0.001\n", "  lr:\n").replace("my-bucket/out/", "my-bucket/out")
    (project / "spec.yaml").write_text(text)
    with pytest.raises(SpecError) as caught:
        load_spec(project / "spec.yaml")
    spec = project / "spec.yaml"
    assert str(caught.value).splitlines() == [
        f"{spec}:17:10: outputs[0].obs: obs://my-bucket/out must be a directory: end it with '/' "
        "(obs://my-bucket/out/)",
        f"{spec}:21:5: hyperparameters.lr: has no value: write one, or remove the key",
    ]
    assert caught.value.lines() == str(caught.value).splitlines()
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert caught.value.exit_code == 2


def test_a_key_without_a_value_is_blamed_on_its_own_line(project: Path) -> None:
    text = (project / "spec.yaml").read_text().replace("  lr: 0.001\n", "  lr:\n")
    (project / "spec.yaml").write_text(text)
    assert _problems(project / "spec.yaml") == [
        "21:5 hyperparameters.lr: has no value: write one, or remove the key"
    ]


def test_utf8_byte_order_mark_is_fine(project: Path) -> None:
    spec = project / "spec.yaml"
    spec.write_bytes(b"\xef\xbb\xbf" + spec.read_bytes())
    assert load_spec(spec).name == "demo"


def test_the_spec_file_can_be_a_pipe(project: Path) -> None:
    # ``majob validate /dev/stdin < spec.yaml`` reads a pipe or a file; a named pipe stands in.
    fifo = project / "spec.fifo"
    os.mkfifo(fifo)
    text = (project / "spec.yaml").read_bytes()

    def writer() -> None:
        with fifo.open("wb") as stream:
            stream.write(text)

    thread = threading.Thread(target=writer, daemon=True)  # never keeps pytest alive
    thread.start()
    try:
        spec = load_spec(fifo)
    finally:
        thread.join(timeout=60)
    assert spec.name == "demo"
    assert not thread.is_alive()


# Garbage from YAML's own punctuation reaches far more parser states than random bytes do.
YAML_BITS = st.sampled_from(
    [*"-:?,[]{}&*!|>'\"%@`#\\ \t\n", "a", "b", "1", "0x", "~", "&a ", "*a", "<<", "!!", "---"]
)
SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=8)
)
NESTED = st.recursive(
    SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4)
    ),
    max_leaves=20,
)


def _load_or_spec_error(path: Path) -> None:
    try:
        load_spec(path)
    except SpecError as error:
        assert error.problems
        assert error.__context__ is None
        for line in str(error).splitlines():
            assert line.startswith(str(path))


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    data=st.binary(max_size=200)
    | st.lists(YAML_BITS, max_size=60).map(lambda bits: "".join(bits).encode())
)
def test_garbage_never_raises_anything_but_a_spec_error(project: Path, data: bytes) -> None:
    path = project / "garbage.yaml"
    path.write_bytes(data)
    _load_or_spec_error(path)


@settings(
    max_examples=100, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(
    document=NESTED,
    key=st.sampled_from(["hyperparameters", "env", "inputs", "stages", "name", "zz"]),
)
def test_any_nested_structure_under_any_key_is_valid_or_a_spec_error(
    project: Path, document: Any, key: str
) -> None:
    from ruamel.yaml import YAML

    yaml = YAML(typ="safe", pure=True)
    path = project / "nested.yaml"
    with path.open("w", encoding="utf-8") as stream:
        yaml.dump({key: document}, stream)
    _load_or_spec_error(path)

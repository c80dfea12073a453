"""The bad-input corpus: each malformed spec gets its exact messages at line:col, exit 2, empty
stdout and no traceback, from ``validate``, ``compile`` and ``run`` alike, and the same lines from
``str(SpecError)`` in Python. A case's ``# set:`` header line is passed as ``--set``.

Hostile cases are here too: alias bombs, ``!!python`` tags (whose code would create
``majob-tag-was-run`` if it ever ran), binary and non-UTF-8 files, nesting past the limit."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.errors import SpecError
from majob.spec.load import load_spec

CASES = Path(__file__).parent / "bad_specs"

EXPECTED: dict[str, list[str]] = {
    "alias_bomb": [
        "alias_bomb.yaml:26:16: env.lol5[0]: aliases expand to more than 10000 values (an alias bomb?); write the values out",
    ],
    "alias_bomb_merge": [
        "alias_bomb_merge.yaml:24:55: stages.m3.f: aliases expand to more than 10000 values (an alias bomb?); write the values out",
    ],
    "alias_cycle": [
        "alias_cycle.yaml:20:10: hyperparameters.again: alias *h is inside its own anchor &h: a job spec cannot be recursive",
    ],
    "alias_too_many": [
        "alias_too_many.yaml:120:9: hyperparameters.k100: more than 100 aliases; a job spec needs far fewer: write the values out",
    ],
    "bad_access_method": [
        "bad_access_method.yaml:15:20: inputs[0].access_method: must be 'parameter' or 'env'",
    ],
    "bad_auto_stop": [
        "bad_auto_stop.yaml:20:12: auto_stop: a duration must be longer than 0 seconds",
    ],
    "bad_name_chars": [
        "bad_name_chars.yaml:1:7: name: must be 1-64 characters of letters, digits, '_' and '-' (got 'my job!')",
    ],
    "bad_obs_bucket_short": [
        "bad_obs_bucket_short.yaml:17:10: outputs[0].obs: bucket name 'ab' must be 3-63 characters long",
    ],
    "bad_obs_bucket_upper": [
        "bad_obs_bucket_upper.yaml:14:10: inputs[0].obs: bucket name 'My_Bucket' may hold only lower-case letters, digits, '-' and '.', and must start and end with a letter or digit",
    ],
    "bad_obs_no_scheme": [
        "bad_obs_no_scheme.yaml:14:10: inputs[0].obs: 'my-bucket/data/' is not an OBS path: write obs://bucket/path/ (or /bucket/path/)",
    ],
    "bad_obs_scheme": [
        "bad_obs_scheme.yaml:14:10: inputs[0].obs: 's3://my-bucket/data/' is not an OBS path: scheme 's3' is not 'obs'",
    ],
    "bad_set_no_equals": [
        "--set 'resources.nodes': expected PATH=VALUE, e.g. resources.nodes=2",
    ],
    "bad_set_no_item": [
        "--set 'inputs.test_url.local=/tmp': inputs.test_url: no item 'test_url': use an index 0..0 or an item's name",
    ],
    "bad_set_unknown_key": [
        "--set 'resources.nodess=2': resources.nodess: unknown key 'nodess'; did you mean 'nodes'?",
    ],
    "bad_set_wrong_type": [
        "--set 'resources.nodes=many': resources.nodes: must be a valid integer, unable to parse string as an integer (got 'many')",
    ],
    "bad_timeout": [
        "bad_timeout.yaml:22:14: stages.local.timeout: 'soon' is not a duration: write seconds or e.g. '90s', '10m', '1h30m'",
    ],
    "binary_file": [
        "binary_file.yaml:1:1: not a UTF-8 text file: byte 0x89 cannot be decoded; save the spec as UTF-8",
    ],
    "boot_file_escapes": [
        "boot_file_escapes.yaml:4:14: code.boot_file: '../train.py' must be a path inside code.dir, like 'train.py'",
    ],
    "channel_clashes_hyperparameter": [
        "channel_clashes_hyperparameter.yaml:20:3: hyperparameters.train_url: 'train_url' is also an input/output name; the script would get two --train_url arguments",
    ],
    "code_obs_not_dir": [
        "code_obs_not_dir.yaml:5:8: code.obs: obs://my-bucket/code must be a directory: end it with '/' (obs://my-bucket/code/)",
    ],
    "custom_image_no_command": [
        "custom_image_no_command.yaml:6:1: image: a custom image needs image.command, e.g. 'python ${MA_JOB_DIR}/...'",
    ],
    "deeply_nested": [
        "deeply_nested.yaml:19:73: nested more than 64 levels deep",
    ],
    "duplicate_channel": [
        "duplicate_channel.yaml:16:5: outputs[0].name: channel name 'data_url' is used twice; names must be unique",
    ],
    "empty_file": [
        "empty_file.yaml:1:1: the file is empty: write a job spec",
    ],
    "engine_without_version": [
        "engine_without_version.yaml:6:1: image: image.engine and image.version go together: add image.version",
    ],
    "env_bad_name": [
        "env_bad_name.yaml:21:3: env.1BAD: '1BAD' is not a valid variable name ([A-Za-z_][A-Za-z0-9_]*)",
    ],
    "env_dollar_value": [
        "env_dollar_value.yaml:21:3: env.DATA: ModelArts does not expand '$' references in env values; write the value",
    ],
    "env_reserved_prefix": [
        "env_reserved_prefix.yaml:21:3: env.MA_DEBUG: the MA_ prefix is reserved by ModelArts; rename the variable",
    ],
    "hccl_without_ascend": [
        "hccl_without_ascend.yaml:21:3: distributed.backend: hccl needs Ascend: use image.engine Ascend-Powered-Engine or an Ascend flavor (snt9...), or pick nccl/gloo",
    ],
    "hyperparameter_list": [
        "hyperparameter_list.yaml:19:11: hyperparameters.epochs: must be a string, a number or a boolean",
    ],
    "key_without_value": [
        "key_without_value.yaml:19:5: hyperparameters.lr: has no value: write one, or remove the key",
    ],
    "missing_boot_file": [
        "missing_boot_file.yaml:4:14: code.boot_file: boot file 'missing.py' is not in code",
    ],
    "missing_code_dir": [
        "missing_code_dir.yaml:3:8: code.dir: code directory no_such_dir does not exist",
    ],
    "missing_required_image": [
        "missing_required_image.yaml:1:1: image: missing required key 'image'",
    ],
    "name_too_long": [
        "name_too_long.yaml:1:7: name: must be 1-64 characters of letters, digits, '_' and '-' (got 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa')",
    ],
    "nccl_on_ascend": [
        "nccl_on_ascend.yaml:18:1: hyperparameters: a single-node multi-card DDP job gets no --world_size/--rank from ModelArts: add hyperparameters world_size and rank",
        "nccl_on_ascend.yaml:21:3: distributed.backend: nccl does not run on Ascend NPUs: use backend hccl",
    ],
    "nodes_zero": [
        "nodes_zero.yaml:11:10: resources.nodes: must be greater than or equal to 1",
    ],
    "not_a_mapping": [
        "not_a_mapping.yaml:1:1: a job spec is a mapping (name:, code:, image:, ...)",
    ],
    "not_utf8": [
        "not_utf8.yaml:2:17: not a UTF-8 text file: byte 0xE9 cannot be decoded; save the spec as UTF-8",
    ],
    "nul_byte": [
        "nul_byte.yaml:11:11: not a UTF-8 text file: control character U+0000 (a binary file?)",
    ],
    "output_not_dir": [
        "output_not_dir.yaml:17:10: outputs[0].obs: obs://my-bucket/out must be a directory: end it with '/' (obs://my-bucket/out/)",
    ],
    "set_bad_index": [
        "--set 'outputs[3].local=/tmp/out': outputs[3]: no item '3': use an index 0..0 or an item's name",
    ],
    "set_through_scalar": [
        "--set 'hyperparameters.epochs.max=0.1': hyperparameters.epochs: is a single value (2), so it has no 'max'; set hyperparameters.epochs=VALUE instead",
    ],
    "single_node_multicard_ddp": [
        "single_node_multicard_ddp.yaml:18:1: hyperparameters: a single-node multi-card DDP job gets no --world_size/--rank from ModelArts: add hyperparameters world_size and rank",
    ],
    "syntax_bad_indent": [
        "syntax_bad_indent.yaml:4:13: YAML syntax error: mapping values are not allowed here",
    ],
    "syntax_duplicate_key": [
        "syntax_duplicate_key.yaml:12:3: resources.nodes: key 'nodes' is written twice (first at line 11); keep one",
    ],
    "syntax_tab": [
        "syntax_tab.yaml:12:1: YAML syntax error: while scanning for the next token: found character '\\t' that cannot start any token",
    ],
    "syntax_unclosed_quote": [
        "syntax_unclosed_quote.yaml:20:1: YAML syntax error: while scanning a quoted scalar: found unexpected end of stream",
    ],
    "tag_bad_int": [
        "tag_bad_int.yaml:19:11: hyperparameters.epochs: 'many' is not a valid !!int",
    ],
    "tag_others": [
        "tag_others.yaml:19:11: hyperparameters.epochs: tag !custom is not allowed; a job spec takes plain strings, numbers, booleans, lists and mappings",
        "tag_others.yaml:20:9: hyperparameters.seed: tag !!binary is not allowed; a job spec takes plain strings, numbers, booleans, lists and mappings",
        "tag_others.yaml:21:9: hyperparameters.arch: tag !<tag:example.com,2000:net> is not allowed; a job spec takes plain strings, numbers, booleans, lists and mappings",
        "tag_others.yaml:22:6: env: tag !!set is not allowed; a job spec takes plain strings, numbers, booleans, lists and mappings",
    ],
    "tag_python_apply_list": [
        "tag_python_apply_list.yaml:1:7: name: tag !!python/object/apply:os.system is not allowed; a job spec takes plain strings, numbers, booleans, lists and mappings",
    ],
    "tag_python_apply_scalar": [
        "tag_python_apply_scalar.yaml:2:14: description: tag !!python/object/apply:os.system is not allowed; a job spec takes plain strings, numbers, booleans, lists and mappings",
    ],
    "unknown_code_key": [
        "unknown_code_key.yaml:4:3: code.bootfile: unknown key 'bootfile'; did you mean 'boot_file'?",
    ],
    "unknown_distributed_key": [
        "unknown_distributed_key.yaml:21:3: distributed.backed: unknown key 'backed'; did you mean 'backend'?",
    ],
    "unknown_image_key": [
        "unknown_image_key.yaml:7:3: image.engin: unknown key 'engin'; did you mean 'engine'?",
    ],
    "unknown_input_key": [
        "unknown_input_key.yaml:15:5: inputs[0].locale: unknown key 'locale'; did you mean 'local'?",
    ],
    "unknown_resources_key": [
        "unknown_resources_key.yaml:10:3: resources.flavour: unknown key 'flavour'; did you mean 'flavor'?",
    ],
    "unknown_stage_key": [
        "unknown_stage_key.yaml:22:5: stages.debug.node: unknown key 'node'; did you mean 'nodes'?",
    ],
    "unknown_stage_name": [
        "unknown_stage_name.yaml:21:3: stages.smoke: unknown key 'smoke'; expected one of: local, debug, formal",
    ],
    "unknown_top_key": [
        "unknown_top_key.yaml:2:1: num_nodes: unknown key 'num_nodes'; did you mean 'resources.nodes'?",
    ],
    "unset_env_ref": [
        "unset_env_ref.yaml:5:8: code.obs: environment variable MAJOB_TEST_UNSET_BUCKET is not set (export it, or write $${MAJOB_TEST_UNSET_BUCKET} for a literal)",
    ],
    "utf16_bom": [
        "utf16_bom.yaml:1:1: not a UTF-8 text file: it starts with a UTF-16 byte-order mark; save the spec as UTF-8",
    ],
    "wrong_type_inputs": [
        "wrong_type_inputs.yaml:12:9: inputs: must be a list (got 'data_url')",
    ],
    "wrong_type_nodes": [
        "wrong_type_nodes.yaml:11:10: resources.nodes: must be a valid integer, unable to parse string as an integer (got 'two')",
    ],
}


# Cases whose tag would create this file (in the current directory) if the loader ran it.
WAS_RUN = "majob-tag-was-run"


def _overrides(case: Path) -> list[str]:
    # Bytes: some cases are not UTF-8 on purpose.
    head = case.read_bytes().split(b"\n", 1)[0].decode("utf-8", errors="replace")
    return [head.removeprefix("# set: ")] if head.startswith("# set: ") else []


@pytest.fixture
def in_cases(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    monkeypatch.chdir(CASES)
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path))  # no user profile leaks in
    monkeypatch.delenv("MAJOB_PROFILE", raising=False)
    monkeypatch.delenv("MAJOB_TEST_UNSET_BUCKET", raising=False)
    return CASES


def test_every_case_file_has_an_expectation() -> None:
    assert sorted(p.stem for p in CASES.glob("*.yaml")) == sorted(EXPECTED)
    assert len(EXPECTED) >= 30


def _assert_refused(args: list[str], expected: list[str]) -> None:
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit)
    assert result.stderr.splitlines() == [f"error: {line}" for line in expected]
    assert result.stdout == ""


@pytest.mark.parametrize("command", ["validate", "compile", "run"])
@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_spec(name: str, command: str, in_cases: Path) -> None:
    case = CASES / f"{name}.yaml"
    sets = [arg for value in _overrides(case) for arg in ("--set", value)]
    _assert_refused([command, case.name, *sets], EXPECTED[name])
    assert not (in_cases / WAS_RUN).exists()


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_bad_spec_from_python(name: str, in_cases: Path) -> None:
    case = CASES / f"{name}.yaml"
    with pytest.raises(SpecError) as caught:
        load_spec(case.name, overrides=_overrides(case))
    assert str(caught.value).splitlines() == EXPECTED[name]
    # Nothing from the parser or pydantic rides along with the error.
    assert caught.value.__cause__ is None
    assert caught.value.__context__ is None
    assert not (in_cases / WAS_RUN).exists()


def test_oversized_spec_is_refused_before_parsing(in_cases: Path, tmp_path: Path) -> None:
    # Not a corpus file: a spec over the limit would bloat the repository. A sparse file is
    # enough, since the size is read from stat before any byte is.
    big = tmp_path / "big.yaml"
    with big.open("wb") as stream:
        stream.write(b"name: demo\n")
        stream.truncate(50 * 2**20)
    expected = [
        f"{big}:1:1: the file is 50.0 MiB: a job spec may be at most 1 MiB (is this the right file?)"
    ]
    for command in ("validate", "compile", "run"):
        _assert_refused([command, str(big)], expected)
    with pytest.raises(SpecError) as caught:
        load_spec(big)
    assert str(caught.value).splitlines() == expected

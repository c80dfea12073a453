from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.spec.schema import spec_json_schema

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

# What `majob --help` and `majob validate` must never import: each costs start-up time.
HEAVY = ("obs", "huaweicloudsdkcore", "huaweicloudsdkmodelarts", "torch", "libcst", "numpy")


def _loaded_modules(args: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from majob.cli.app import app\n"
        "try:\n"
        f"    app({args!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, check=False
    )
    return set(done.stderr.split())


@pytest.mark.parametrize(
    "args",
    [
        ["--help"],
        ["validate", "tests/cli/bad_specs/unknown_image_key.yaml"],
        ["validate", "job_specs/mnist.yaml"],  # a valid spec: the offline catalogue check too
    ],
)
def test_startup_imports_nothing_heavy(args: list[str]) -> None:
    loaded = _loaded_modules(args)
    assert "majob.cli.app" in loaded  # the probe really ran
    heavy = sorted(m for m in loaded if m.split(".")[0] in HEAVY)
    assert heavy == []


def test_bad_spec_as_a_real_process_has_no_traceback() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "majob", "validate", "tests/cli/bad_specs/syntax_tab.yaml"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        check=False,
    )
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr == (
        "error: tests/cli/bad_specs/syntax_tab.yaml:12:1: YAML syntax error: while scanning for "
        "the next token: found character '\\t' that cannot start any token\n"
    )


def test_debug_env_shows_the_traceback(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAJOB_DEBUG", "1")
    result = runner.invoke(app, ["validate", str(ROOT / "tests/cli/bad_specs/nodes_zero.yaml")])
    assert result.exit_code == 2  # validate reports spec errors itself, even in debug mode
    monkeypatch.chdir(ROOT)
    result = runner.invoke(app, ["init", "--output", "README.md"])
    assert result.exception is not None and not isinstance(result.exception, SystemExit)


def test_schema_file_is_current() -> None:
    committed = json.loads((ROOT / "majob.schema.json").read_text(encoding="utf-8"))
    assert committed == spec_json_schema(), "run: majob schema -o majob.schema.json"


def test_schema_command_prints_json() -> None:
    result = runner.invoke(app, ["schema"])
    assert result.exit_code == 0
    schema = json.loads(result.stdout)
    assert schema["additionalProperties"] is False
    assert "resources" in schema["properties"]


SCRIPT = """\
import argparse
parser = argparse.ArgumentParser()
parser.add_argument("--data_url", type=str, default="/cache/data")
parser.add_argument("--train_url", type=str, default="/cache/out")
parser.add_argument("--epochs", type=int, default=5)
parser.add_argument("--lr", type=float, default=0.01)
parser.add_argument("--amp", action="store_true")
parser.add_argument("--arch", default="resnet18")
parser.add_argument("--seed", type=int)
parser.add_argument("--init_method", default="tcp://127.0.0.1:6666")
parser.add_argument("--rank", type=int, default=0)
args, _ = parser.parse_known_args()
"""


def test_init_from_script_proposes_channels_and_hyperparameters(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path))
    (tmp_path / "mnist").mkdir()
    (tmp_path / "mnist" / "train.py").write_text(SCRIPT)
    (tmp_path / "data" / "data_url").mkdir(parents=True)
    result = runner.invoke(app, ["init", "mnist/train.py", "-o", "job.yaml"])
    assert result.exit_code == 0, result.output
    from majob.spec.load import load_spec

    spec = load_spec(tmp_path / "job.yaml")
    assert spec.name == "mnist"
    assert [c.name for c in spec.inputs] == ["data_url"]
    assert [c.name for c in spec.outputs] == ["train_url"]
    assert spec.hyperparameters == {"epochs": 5, "lr": 0.01, "amp": False, "arch": "resnet18"}
    assert "seed" in (tmp_path / "job.yaml").read_text()  # named as required, with no default
    again = runner.invoke(app, ["init", "mnist/train.py", "-o", "job.yaml"])
    assert again.exit_code == 2
    assert again.stderr == "error: job.yaml exists\nerror: hint: pass --force to overwrite it\n"


def test_init_rejects_a_broken_script(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad.py").write_text("def (:\n")
    result = runner.invoke(app, ["init", "bad.py"])
    assert result.exit_code == 2
    assert result.stderr.startswith("error: bad.py:1:")


def _write_project(root: Path) -> Path:
    (root / "code").mkdir()
    (root / "code" / "train.py").write_text("print('hi')\n")
    spec = root / "job.yaml"
    spec.write_text(
        "name: demo\n"
        "code: {dir: code, boot_file: train.py, obs: 'obs://bkt/majob/code/'}\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}\n"
        "resources: {flavor: modelarts.vm.cpu.8u}\n"
        "outputs: [{name: train_url, obs: 'obs://bkt/out/'}]\n"
        "hyperparameters: {epochs: 3, amp: true}\n"
        "stages: {debug: {nodes: 1, hyperparameters: {epochs: 1}}}\n"
    )
    return spec


def test_compile_rest_and_sdk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path))
    spec = _write_project(tmp_path)
    rest = runner.invoke(
        app, ["compile", str(spec), "--stage", "debug", "--set", "resources.pool=p"]
    )
    assert rest.exit_code == 0, rest.output
    body = json.loads(rest.stdout)
    assert body["metadata"]["name"] == "demo-debug"
    assert body["spec"]["resource"]["pool_id"] == "p"
    assert {"name": "epochs", "value": "1"} in body["algorithm"]["parameters"]
    assert {"name": "amp", "value": "true"} in body["algorithm"]["parameters"]
    sdk = runner.invoke(app, ["compile", str(spec), "--target", "sdk", "--format", "python"])
    assert sdk.exit_code == 0, sdk.output
    compile(sdk.stdout, "snippet", "exec")  # valid Python
    assert "train_instance_type='modelarts.vm.cpu.8u'" in sdk.stdout
    sdk_json = runner.invoke(app, ["compile", str(spec), "--target", "sdk"])
    assert json.loads(sdk_json.stdout)["fit"]["job_name"] == "demo"


def test_compile_says_each_stages_output_folders_on_stderr(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path))
    spec = _write_project(tmp_path)
    spec.write_text(
        spec.read_text().replace(
            "stages: {debug:", "stages: {formal: {outputs: {train_url: 'obs://bkt/v1/'}}, debug:"
        )
        + "fault_tolerance: {retries: 1, checkpoints: train_url/ckpt/}\n"
    )
    folders = {}
    for stage in ("debug", "formal"):
        result = runner.invoke(app, ["compile", str(spec), "--stage", stage])
        assert result.exit_code == 0, result.output
        body = json.loads(result.stdout)  # stdout stays the JSON alone
        (output,) = body["algorithm"]["outputs"]
        folders[stage] = output["remote"]["obs"]["obs_url"]
        assert result.stderr.splitlines() == [
            f"note: outputs of stage {stage}: train_url -> obs:/{folders[stage]} "
            + (
                "(named by stages.formal.outputs)"
                if stage == "formal"
                else "(the stage's own folder)"
            ),
            f"note: checkpoints of stage {stage}: obs:/{folders[stage]}ckpt/ (downloaded into "
            "the container before the job starts)",
        ]
    assert folders == {"debug": "/bkt/out/debug/", "formal": "/bkt/v1/"}
    local = runner.invoke(app, ["compile", str(spec), "--stage", "local", "--target", "sdk"])
    assert local.stderr == "note: outputs of stage local: train_url -> the run directory\n"


def test_compile_refuses_python_for_rest(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path))
    spec = _write_project(tmp_path)
    result = runner.invoke(app, ["compile", str(spec), "--format", "python"])
    assert result.exit_code == 2
    assert result.stderr == ("error: --format python is for --target sdk; the REST body is JSON\n")


def test_compile_does_not_show_values_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path))
    monkeypatch.setenv("MY_TOKEN", "tok-very-secret-1")
    spec = _write_project(tmp_path)
    spec.write_text(spec.read_text() + "env: {API_TOKEN: '${MY_TOKEN}'}\n")
    for target in (["--target", "rest"], ["--target", "sdk", "--format", "python"]):
        shown = runner.invoke(app, ["compile", str(spec), *target])
        assert shown.exit_code == 0, shown.output
        assert "tok-very-secret-1" not in shown.output
        assert "***" in shown.stdout


def test_a_set_the_debug_stage_overrides_is_said_and_the_stage_wins() -> None:
    spec = str(ROOT / "job_specs" / "mnist.yaml")
    result = runner.invoke(
        app, ["compile", spec, "--stage", "debug", "--set", "hyperparameters.epochs=3"]
    )
    assert result.exit_code == 0, result.output
    body = json.loads(result.stdout)
    assert {"name": "epochs", "value": "1"} in body["algorithm"]["parameters"]
    warnings = [line for line in result.stderr.splitlines() if not line.startswith("note: ")]
    assert warnings == [
        "warning: --set hyperparameters.epochs=3: the debug stage runs with "
        "stages.debug.hyperparameters.epochs=1 from the spec (a stage's override wins); to "
        "change it there, --set stages.debug.hyperparameters.epochs=3"
    ]
    formal = runner.invoke(app, ["compile", spec, "--set", "hyperparameters.epochs=3"])
    assert formal.exit_code == 0  # formal has no override: it wins, and nothing is warned
    assert all(line.startswith("note: ") for line in formal.stderr.splitlines())


def test_a_hyperparameter_the_boot_files_argparse_lacks_is_said() -> None:
    spec = str(ROOT / "job_specs" / "mnist.yaml")
    result = runner.invoke(app, ["validate", spec, "--set", "hyperparameters.epoch=3"])
    assert result.exit_code == 0, result.output
    assert result.stderr == (
        "warning: --set hyperparameters.epoch=3: no add_argument in train.py or the code beside "
        "it defines --epoch, so parse_args() will stop on --epoch=... (parse_known_args() "
        "ignores it); did you mean 'epochs'?\n"
    )

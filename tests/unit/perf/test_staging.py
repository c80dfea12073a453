"""What a profiled cloud job is given (``submit|pipeline --perf``) and what a local run's nodes
get: the staged code and settings, pure file work (no torch)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from majob.errors import ConfigError
from majob.perf.setup import BOOTSTRAP_ENV, CONFIG_ENV, for_local_run
from majob.perf.staging import BOOT_ENV, staged_for_perf
from majob.runner.layout import container_paths
from majob.spec.load import load_spec

SPEC = """\
name: staged
code: {dir: code, boot_file: train.py, obs: "obs://bkt/code/"}
image: IMAGE
resources: {flavor: modelarts.vm.cpu.8u}
outputs: [{name: train_url, obs: "obs://bkt/out/"}]
perf: {active: 2}
stages: {debug: {perf: {active: 1, level: level2}}}
"""
PRESET = "{engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}"


def _spec(tmp_path: Path, image: str = PRESET, outputs: bool = True) -> Path:
    (tmp_path / "code").mkdir(exist_ok=True)
    (tmp_path / "code" / "train.py").write_text("print('train')\n")
    text = SPEC.replace("IMAGE", image)
    if not outputs:
        text = text.replace('outputs: [{name: train_url, obs: "obs://bkt/out/"}]\n', "")
    (tmp_path / "spec.yaml").write_text(text)
    return tmp_path / "spec.yaml"


def test_the_staged_copy_boots_the_bootstrap_with_the_stage_s_perf(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path))
    staged = staged_for_perf(spec, tmp_path / "staging", "debug")
    assert staged.code.boot_file == "majob_perf/bootstrap.py"
    assert staged.code.dir == str(tmp_path / "staging")
    assert staged.env[BOOT_ENV] == "train.py"
    tools = tmp_path / "staging" / "majob_perf"
    assert sorted(p.name for p in tools.iterdir()) == [
        "bootstrap.py",
        "profiler.py",
        "settings.json",
        "steplog.py",
    ]
    assert (tmp_path / "staging" / "train.py").read_text() == "print('train')\n"
    settings = json.loads((tools / "settings.json").read_text())
    assert settings["mode"] == "profile"
    assert settings["profiling_dir"] == "${MA_MOUNT_PATH}/outputs/train_url_0/profiling"
    assert (settings["perf"]["active"], settings["perf"]["level"]) == (1, "level2")
    assert settings["step_line_seconds"] == 30.0
    staged_for_perf(spec, tmp_path / "staging", "formal")  # staged anew for the formal stage
    formal = json.loads((tools / "settings.json").read_text())
    assert (formal["perf"]["active"], formal["perf"]["level"]) == (2, "level0")
    assert sorted(p.name for p in (tmp_path / "code").iterdir()) == ["train.py"]


def test_a_custom_image_or_a_spec_without_outputs_cannot_be_profiled(tmp_path: Path) -> None:
    custom = load_spec(_spec(tmp_path, image="{swr: org/img:1, command: 'python train.py'}"))
    with pytest.raises(ConfigError, match="--perf needs a preset engine"):
        staged_for_perf(custom, tmp_path / "staging", "debug")
    bare = load_spec(_spec(tmp_path, outputs=False))
    with pytest.raises(ConfigError, match="the spec has none"):
        staged_for_perf(bare, tmp_path / "staging", "debug")


def test_a_local_run_s_nodes_get_steps_mode_or_profile_mode(tmp_path: Path) -> None:
    spec = load_spec(_spec(tmp_path)).at_stage("local")
    paths = container_paths(spec, tmp_path / "run" / "ma-user")
    for profile in (False, True):
        env = for_local_run(profile)(spec, paths, tmp_path / "run")
        assert env[BOOTSTRAP_ENV].endswith("majob/perf/bootstrap.py")
        settings = json.loads(Path(env[CONFIG_ENV]).read_text())
        if profile:
            assert settings["profiling_dir"] == str(paths.outputs["train_url"] / "profiling")
            assert settings["perf"]["active"] == 2
        else:
            assert settings == {
                "mode": "steps",
                "steps_dir": str(tmp_path / "run" / "steps"),
                "step_line_seconds": 30.0,
            }

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from majob.image.compat import check_env, compare
from majob.image.engine_ids import EngineIdError, parse_engine_version
from majob.image.engines import PresetEngine, find_preset, preset_engines
from majob.image.localenv import LocalEnv, ThirdParty
from majob.spec.models import JobSpec

# The engine ids of the reference (modelarts.md §3.4): the tests do not depend on the catalogue.
PYTORCH = "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"
TENSORFLOW = "tensorflow_2.1.0-cuda_10.1-py_3.7-ubuntu_18.04-x86_64"
HOROVOD = "horovod_0.22.1-pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"
ASCEND = "mindspore_1.6.0-cann_5.0.3.6-py_3.7-euler_2.8.3-aarch64"
PRESETS = tuple(
    PresetEngine(name, parse_engine_version(version))
    for name, version in [
        ("PyTorch", PYTORCH),
        ("TensorFlow", TENSORFLOW),
        ("Horovod", HOROVOD),
        ("Ascend-Powered-Engine", ASCEND),
    ]
)
MATCHING = LocalEnv(
    python="3.7.12",
    machine="x86_64",
    executable="/opt/py37/bin/python",
    torch="1.8.1+cu102",
    cuda="10.2",
    third_party=(
        ThirdParty("torch", True, (("torch", "1.8.1+cu102"),)),
        ThirdParty("cv2", True, (("opencv-python", "4.5.0"),)),
    ),
)
NEWER = dataclasses.replace(MATCHING, python="3.11.7", torch="2.1.0+cu121", cuda="12.1")


def spec(image: dict[str, str]) -> JobSpec:
    return JobSpec.model_validate(
        {
            "name": "job",
            "code": {"dir": ".", "boot_file": "train.py"},
            "image": image,
            "resources": {"flavor": "modelarts.vm.cpu.8u"},
        }
    )


def test_matching_environment_is_compatible() -> None:
    result = check_env(
        spec({"engine": "PyTorch", "version": PYTORCH}),
        "s.yaml",
        MATCHING,
        ["torch", "cv2"],
        PRESETS,
    )
    assert result.verdict == "compatible" and result.ok
    assert result.problems == ()
    assert result.notes == (
        "third-party imports the preset image may lack: cv2 (opencv-python==4.5.0)",
    )
    assert result.advice == f"use the preset engine PyTorch {PYTORCH}"
    assert result.to_dict()["verdict"] == "compatible"


def test_newer_environment_is_told_to_build_a_custom_image() -> None:
    result = check_env(
        spec({"engine": "PyTorch", "version": PYTORCH}), "s.yaml", NEWER, ["torch"], PRESETS
    )
    assert result.verdict == "incompatible" and not result.ok
    assert result.problems == (
        "Python: 3.11.7 here, 3.7 in the engine",
        "PyTorch: 2.1.0+cu121 here, 1.8.0 in the engine",
        "CUDA: torch here is built for 12.1, the engine has 10.2",
    )
    assert result.closest is None
    assert "majob image dockerfile SPEC" in result.advice


def test_the_closest_matching_engine_is_suggested() -> None:
    result = check_env(
        spec({"engine": "TensorFlow", "version": TENSORFLOW}),
        "s.yaml",
        MATCHING,
        ["torch"],
        PRESETS,
    )
    assert result.verdict == "incompatible"
    assert result.problems == ("PyTorch: the engine has none (tensorflow 2.1.0)",)
    assert result.closest == PYTORCH
    assert result.advice == f"switch to the preset engine PyTorch {PYTORCH}: it matches"


def test_custom_image_is_unchecked_but_a_matching_preset_is_named() -> None:
    custom = {"swr": "swr.cn-north-4.myhuaweicloud.com/o/i:1", "command": "python x.py"}
    result = check_env(spec(custom), "s.yaml", MATCHING, ["torch"], PRESETS)
    assert (result.verdict, result.ok, result.closest) == ("unchecked", True, PYTORCH)
    assert result.notes[0] == (
        "custom image: majob cannot see inside it; it must hold Python 3.7 and PyTorch 1.8"
    )


def test_cpu_build_and_missing_imports_are_notes() -> None:
    cpu = dataclasses.replace(
        MATCHING,
        torch="1.8.0+cpu",
        cuda=None,
        third_party=(ThirdParty("einops", False, ()),),
    )
    result = check_env(
        spec({"engine": "PyTorch", "version": PYTORCH}), "s.yaml", cpu, ["torch", "einops"], PRESETS
    )
    assert result.verdict == "compatible"
    assert result.notes == (
        "torch here is a CPU build; the engine's torch uses CUDA 10.2, so test the GPU path in a "
        "debug job",
        "imported but not installed for /opt/py37/bin/python: einops",
    )


def test_ascend_engine_notes() -> None:
    comparison = compare(parse_engine_version(ASCEND), MATCHING, ["torch"])
    assert comparison.problems == ("PyTorch: the engine has none (mindspore 1.6.0)",)
    assert any("majob check --target npu" in note for note in comparison.notes)
    assert any(note.startswith("CPU: x86_64 here, aarch64") for note in comparison.notes)


def test_cuda_build_on_a_cpu_engine() -> None:
    cpu_engine = parse_engine_version("pytorch_1.8.0-cpu-py_3.7-ubuntu_18.04-x86_64")
    assert compare(cpu_engine, MATCHING, []).problems == (
        "CUDA: torch here is built for CUDA 10.2, the engine is CPU-only",
    )


def test_unknown_engine_suggests_the_closest() -> None:
    unknown = "pytorch_1.9.0-cuda_11.1-py_3.7-ubuntu_18.04-x86_64"
    with pytest.raises(EngineIdError, match=f"unknown preset engine PyTorch {unknown}") as caught:
        find_preset("PyTorch", unknown, PRESETS)
    assert caught.value.hint is not None
    assert caught.value.hint.startswith(f"closest known: {PYTORCH}, {HOROVOD}")


def test_engine_name_must_match_its_version() -> None:
    with pytest.raises(EngineIdError, match="belongs to engine 'Horovod', not 'PyTorch'"):
        find_preset("PyTorch", HOROVOD, PRESETS)


def test_malformed_engine_id_gets_the_parser_message() -> None:
    with pytest.raises(EngineIdError, match="is not an engine version id"):
        find_preset("PyTorch", "pytorch-latest", PRESETS)


def test_the_catalogue_parses() -> None:
    # Every engine of majob.spec.catalog has an id the parser reads.
    engines = preset_engines()
    assert engines
    assert {engine.id for engine in engines} >= {PYTORCH}
    assert all(engine.version.python for engine in engines)


def test_spec_path_is_reported(tmp_path: Path) -> None:
    result = check_env(
        spec({"engine": "PyTorch", "version": PYTORCH}),
        str(tmp_path / "s.yaml"),
        MATCHING,
        [],
        PRESETS,
    )
    assert result.to_dict()["spec"] == str(tmp_path / "s.yaml")

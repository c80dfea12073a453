from __future__ import annotations

import pytest

from majob.image.engine_ids import (
    EngineIdError,
    closest_ids,
    parse_engine_version,
    same_release,
    version_key,
)


def test_pytorch_gpu_id() -> None:
    engine = parse_engine_version("pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64")
    assert engine.frameworks == (("pytorch", "1.8.0"),)
    assert (engine.pytorch, engine.python, engine.cuda, engine.cann) == (
        "1.8.0",
        "3.7",
        "10.2",
        None,
    )
    assert (engine.os, engine.os_version, engine.arch) == ("ubuntu", "18.04", "x86_64")
    assert engine.accelerator == "cuda"


def test_horovod_names_two_frameworks() -> None:
    engine = parse_engine_version(
        "horovod_0.22.1-pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64"
    )
    assert engine.frameworks == (("horovod", "0.22.1"), ("pytorch", "1.8.0"))
    assert engine.pytorch == "1.8.0"


def test_undotted_ubuntu_version_is_normalised() -> None:
    engine = parse_engine_version("mindspore_1.3.0-cuda_10.1-py_3.7-ubuntu_1804-x86_64")
    assert engine.os_version == "18.04"
    assert engine.pytorch is None
    assert engine.framework("mindspore") == "1.3.0"


def test_ascend_id_keeps_non_numeric_versions() -> None:
    engine = parse_engine_version("pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64")
    assert (engine.cann, engine.cuda, engine.accelerator) == ("8.0.rc1", None, "cann")
    assert (engine.os, engine.arch) == ("euler", "aarch64")
    assert version_key(engine.cann) == (8, 0, 1)


def test_cpu_id() -> None:
    engine = parse_engine_version("pytorch_1.8.0-cpu-py_3.7-ubuntu_18.04-x86_64")
    assert engine.accelerator == "cpu"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("pytorch-1.8.0", "is not an engine version id"),
        ("pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-riscv", "is not an engine version id"),
        ("pytorch_1.8.0-cuda_10.2-py_3.7-windows_10-x86_64", "is not an OS"),
        ("pytorch_1.8.0-cuda10.2-py_3.7-ubuntu_18.04-x86_64", "'cuda10.2' is not <name>_<version>"),
        ("pytorch_1.8.0-cuda_10.2-ubuntu_18.04-x86_64", "names no Python version"),
        ("cuda_10.2-cpu-py_3.7-ubuntu_18.04-x86_64", "names no framework"),
    ],
)
def test_malformed_ids_say_which_part_is_wrong(text: str, message: str) -> None:
    with pytest.raises(EngineIdError, match=message):
        parse_engine_version(text)


def test_same_release_compares_major_minor() -> None:
    assert same_release("3.7.12", "3.7")
    assert not same_release("3.10", "3.1")
    assert same_release("1.8.1+cu102", "1.8.0")


def test_closest_ids_by_spelling() -> None:
    known = [
        "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64",
        "tensorflow_2.1.0-cuda_10.1-py_3.7-ubuntu_18.04-x86_64",
    ]
    assert closest_ids("pytorch_1.9.0-cuda_11.1-py_3.7-ubuntu_18.04-x86_64", known)[0] == known[0]
    assert closest_ids("zzz", known) == known  # nothing close: the known ids, in order

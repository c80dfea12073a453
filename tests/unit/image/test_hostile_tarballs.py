"""Hostile image tarballs: every one is an ``ImageTarError`` (one line, exit 2 from the CLI),
never another exception, a memory blow-up or endless recursion.

The fuzz tests are derandomized, with no example database and a bounded number of examples: the
same examples on every run and machine, so they run in CI as ordinary tests.
"""

from __future__ import annotations

import gzip
import importlib.util
import io
import json
import tarfile
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from majob.image.archive import ImageTarError
from majob.image.tarball import inspect_image


def _load(name: str) -> ModuleType:
    spec = importlib.util.spec_from_file_location(name, Path(__file__).with_name(f"{name}.py"))
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


builders = _load("image_tarballs")
hostile = _load("hostile_tars")
FUZZ = settings(
    derandomize=True,
    database=None,  # the same examples on every machine, whatever an earlier run found
    max_examples=150,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)


def _image(path: Path, kind: str, layers: list[bytes]) -> Path:
    make = builders.docker_save if kind == "docker_save" else builders.oci_layout
    made: Path = make(path, layers, [f"RUN step {i}" for i in range(len(layers))])
    return made


def _refused(path: Path, match: str) -> ImageTarError:
    with pytest.raises(ImageTarError, match=match) as caught:
        inspect_image(path)
    return caught.value


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_a_pax_record_that_is_not_a_number(tmp_path: Path, compression: str) -> None:
    layer = hostile.pax_layer(b"xx size=5\n")
    if compression == "gzip":
        layer = gzip.compress(layer, mtime=0)
    path = _image(tmp_path / "image.tar", "docker_save", [layer])
    _refused(path, r"layer 1 \(.*\) is truncated or damaged")


@pytest.mark.parametrize("compression", ["none", "gzip"])
def test_a_header_claiming_a_terabyte_is_refused_before_it_is_read(
    tmp_path: Path, compression: str
) -> None:
    layer = hostile.huge_pax_layer()
    if compression == "gzip":
        layer = gzip.compress(layer, mtime=0)
    path = _image(tmp_path / "image.tar", "oci_layout", [layer])
    error = _refused(path, r"layer 1 \(.*\) is truncated or damaged")
    assert "1099511627776" in error.message


def test_an_outer_member_claiming_a_terabyte(tmp_path: Path) -> None:
    path = _image(tmp_path / "image.tar", "docker_save", [builders.layer({"a": b"x"})])
    data = bytearray(path.read_bytes())
    hostile.set_size(data, hostile.headers(bytes(data))[-1], 2**40)  # manifest.json
    path.write_bytes(bytes(data))
    _refused(path, r"image\.tar: truncated or damaged")


def test_an_index_that_lists_itself(tmp_path: Path) -> None:
    path = hostile.self_index(tmp_path / "loop.tar")
    _refused(path, r"loop\.tar: blobs/sha256/ab lists itself")


def test_an_index_nested_too_deeply(tmp_path: Path) -> None:
    path = tmp_path / "deep.tar"
    media = "application/vnd.oci.image.index.v1+json"
    with tarfile.open(path, "w") as tar:
        for level in range(40):
            name = "index.json" if level == 0 else f"blobs/sha256/{level:02x}"
            child = {"mediaType": media, "digest": f"sha256:{level + 1:02x}"}
            data = json.dumps({"manifests": [child]}).encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    _refused(path, r"deep\.tar: index\.json nests indexes more than \d+ deep")


def test_json_nested_too_deeply(tmp_path: Path) -> None:
    path = tmp_path / "nested.tar"
    data = b"[" * 100_000 + b"]" * 100_000
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    _refused(path, r"manifest\.json is not valid JSON")


@pytest.mark.parametrize(
    "entry",
    [
        {"Config": 7, "Layers": []},
        {"Config": "c.json", "Layers": [{"digest": "x"}]},
        {"RepoTags": [1, 2], "Layers": []},
        {"Layers": "layer.tar"},
    ],
)
def test_a_manifest_with_fields_of_the_wrong_type(tmp_path: Path, entry: object) -> None:
    path = tmp_path / "odd.tar"
    data = json.dumps([entry]).encode()
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    _refused(path, r"manifest\.json has an unexpected shape")


def test_the_cli_prints_one_error_line_and_exits_2(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from majob.cli.app import app

    for path in (
        _image(tmp_path / "pax.tar", "docker_save", [hostile.pax_layer(b"xx size=5\n")]),
        _image(tmp_path / "huge.tar", "docker_save", [hostile.huge_pax_layer()]),
        hostile.self_index(tmp_path / "loop.tar"),
    ):
        result = CliRunner().invoke(app, ["image", "inspect", str(path)])
        assert result.exit_code == 2, result.output
        # One line says what is wrong and where; a hint line may follow (the house style).
        lines = result.stderr.splitlines()
        assert lines[0].startswith(f"error: {path}: ") and "Traceback" not in result.output
        assert all(line.startswith("error: hint: ") for line in lines[1:])


def test_names_from_the_tarball_cannot_drive_the_terminal(tmp_path: Path) -> None:
    from typer.testing import CliRunner

    from majob.cli.app import app

    layer = builders.layer({"a": b"x" * 5000})
    path = builders.docker_save(
        tmp_path / "image.tar", [layer], ["RUN make \x1b[2J\x1b]0;pwned\x07"], tag="evil\x1b[31m:1"
    )
    shown = CliRunner().invoke(app, ["image", "inspect", str(path), "--layer-size", "1kB"])
    assert shown.exit_code == 1, shown.output
    assert "\x1b" not in shown.output and "\x07" not in shown.output
    assert "evil\\x1b[31m:1" in shown.stdout and "RUN make \\x1b[2J" in shown.stdout
    data = json.dumps([{"Config": None, "Layers": ["gone\n\x1b[2J/layer.tar"]}]).encode()
    missing = tmp_path / "missing.tar"
    with tarfile.open(missing, "w") as tar:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(ImageTarError) as caught:
        inspect_image(missing)
    assert "gone\\n\\x1b[2J/layer.tar" in caught.value.message
    assert caught.value.message.isprintable()


# -- fuzz ------------------------------------------------------------------------------------


def _inspect_or_refuse(path: Path) -> None:
    try:
        inspect_image(path)
    except ImageTarError as error:
        assert "\n" not in error.message


@FUZZ
@given(data=st.binary(max_size=4096))
def test_random_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "random.tar"
    path.write_bytes(data)
    _inspect_or_refuse(path)


def _real_image(tmp_path: Path, kind: str) -> bytes:
    layers = [
        builders.layer({"etc/": b"", "etc/os-release": b"x" * 700, "a/" + "n" * 120: b"y"}),
        builders.layer({f"site/f{i}.py": b"z" * 30 for i in range(5)}, "gzip"),
        builders.layer({"big.bin": b"w" * 3000}, "zstd"),
    ]
    return _image(tmp_path / f"real-{kind}.tar", kind, layers).read_bytes()


KINDS = st.sampled_from(["docker_save", "oci_layout"])


@FUZZ
@given(kind=KINDS, cut=st.floats(min_value=0.0, max_value=1.0))
def test_truncated_real_tarballs(tmp_path: Path, kind: str, cut: float) -> None:
    data = _real_image(tmp_path, kind)
    path = tmp_path / "cut.tar"
    path.write_bytes(data[: int(len(data) * cut)])
    _inspect_or_refuse(path)


@FUZZ
@given(
    kind=KINDS,
    changes=st.lists(
        st.tuples(st.floats(min_value=0.0, max_value=1.0), st.binary(min_size=1, max_size=16)),
        min_size=1,
        max_size=4,
    ),
)
def test_corrupted_real_tarballs(
    tmp_path: Path, kind: str, changes: list[tuple[float, bytes]]
) -> None:
    data = bytearray(_real_image(tmp_path, kind))
    for where, replacement in changes:
        start = int((len(data) - 1) * where)
        data[start : start + len(replacement)] = replacement
    path = tmp_path / "corrupt.tar"
    path.write_bytes(bytes(data))
    _inspect_or_refuse(path)


HEADER_FIELDS = st.sampled_from(
    [(0, 100), (100, 8), (124, 12), (156, 1), (157, 100), (257, 8), (345, 155)]
)


@FUZZ
@given(
    kind=KINDS,
    which=st.integers(min_value=0, max_value=50),
    field=HEADER_FIELDS,
    value=st.binary(min_size=1, max_size=155),
)
def test_header_fields_rewritten_with_a_valid_checksum(
    tmp_path: Path, kind: str, which: int, field: tuple[int, int], value: bytes
) -> None:
    """A header whose checksum is right but whose fields lie (a size, a type, a name)."""
    data = bytearray(_real_image(tmp_path, kind))
    offsets = hostile.headers(bytes(data))
    # The uncompressed layer's own headers too: they sit inside the outer tar.
    with tarfile.open(fileobj=io.BytesIO(bytes(data))) as tar:
        first_layer = next(m for m in tar.getmembers() if m.size > 1500)
        inner = hostile.headers(bytes(data[first_layer.offset_data :][: first_layer.size]))
    offsets += [first_layer.offset_data + offset for offset in inner]
    header = offsets[which % len(offsets)]
    start, length = field
    data[header + start : header + start + length] = value[:length].ljust(length, b"\0")
    hostile.fix_checksum(data, header)
    path = tmp_path / "lying.tar"
    path.write_bytes(bytes(data))
    _inspect_or_refuse(path)

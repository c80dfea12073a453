from __future__ import annotations

import gzip
import io
import json
import tarfile
from pathlib import Path
from types import ModuleType

import pytest

from majob.image.archive import ImageTarError
from majob.image.tarball import Limits, inspect_image

HISTORY = [
    "/bin/sh -c #(nop) ADD file:base in /",
    "RUN pip install torch==2.1.0",
    "RUN pip install -r r.txt",
]


def _layers(tarballs: ModuleType) -> list[bytes]:
    return [
        tarballs.layer({"etc/": b"", "etc/os-release": b"x" * 100}),
        tarballs.layer({f"site/f{i}.py": b"y" * 10 for i in range(30)}, "gzip"),
        tarballs.layer({"big.bin": b"z" * 4000}, "zstd"),
    ]


@pytest.mark.parametrize("kind", ["docker_save", "oci_layout"])
def test_reads_every_layer_of_both_formats(tarballs: ModuleType, tmp_path: Path, kind: str) -> None:
    path = getattr(tarballs, kind)(tmp_path / "image.tar", _layers(tarballs), HISTORY)
    [report] = inspect_image(path)
    assert report.format == ("docker-save" if kind == "docker_save" else "oci")
    assert [layer.compression for layer in report.layers] == ["none", "gzip", "zstd"]
    assert [layer.entries for layer in report.layers] == [2, 30, 1]
    assert [layer.created_by for layer in report.layers] == HISTORY
    # An uncompressed layer is its own size; the others are counted as decompressed.
    first, second, third = report.layers
    assert first.compressed_bytes == first.uncompressed_bytes
    assert second.uncompressed_bytes == len(gzip.decompress(_layers(tarballs)[1]))
    assert third.uncompressed_bytes > third.compressed_bytes
    assert report.total_uncompressed == sum(layer.uncompressed_bytes for layer in report.layers)
    assert report.findings == [] and report.ok


def test_small_limits_name_the_layer_and_its_history_entry(
    tarballs: ModuleType, tmp_path: Path
) -> None:
    path = tarballs.docker_save(tmp_path / "image.tar", _layers(tarballs), HISTORY)
    limits = Limits(advised_total=10**9, max_total=10**9, layer_bytes=12_000, layer_entries=20)
    [report] = inspect_image(path, limits)
    messages = [f.message for f in report.findings]
    assert len(messages) == 2
    assert messages[0].startswith("layer 2 is 41 kB, over 12 kB per layer")
    assert messages[0].endswith("created by: RUN pip install torch==2.1.0")
    assert messages[1].startswith("layer 2 has 30 entries, over 20 per layer")
    assert not report.ok


def test_total_between_advice_and_limit_is_a_warning(tarballs: ModuleType, tmp_path: Path) -> None:
    path = tarballs.oci_layout(tmp_path / "image.tar", _layers(tarballs), HISTORY)
    [report] = inspect_image(path, Limits(advised_total=1000, max_total=10**9))
    assert [(f.level, f.message.split(",")[0]) for f in report.findings] == [
        ("warning", "image is 61.4 kB")
    ]
    assert report.ok
    [report] = inspect_image(path, Limits(advised_total=1000, max_total=2000))
    assert [f.level for f in report.findings] == ["error"]


def test_history_that_does_not_match_the_layers_is_left_out(
    tarballs: ModuleType, tmp_path: Path
) -> None:
    path = tarballs.docker_save(tmp_path / "image.tar", _layers(tarballs), HISTORY[:2])
    [report] = inspect_image(path)
    assert [layer.created_by for layer in report.layers] == [None, None, None]


# -- bad input ---------------------------------------------------------------------------


def test_truncated_tarball(tarballs: ModuleType, tmp_path: Path) -> None:
    path = tarballs.docker_save(tmp_path / "image.tar", _layers(tarballs), HISTORY)
    data = path.read_bytes()
    cut = tmp_path / "cut.tar"
    cut.write_bytes(data[: len(data) // 2])
    with pytest.raises(ImageTarError, match=r"cut.tar: truncated or damaged after 0 entries"):
        inspect_image(cut)


def test_truncated_before_the_manifest(tarballs: ModuleType, tmp_path: Path) -> None:
    path = tarballs.oci_layout(tmp_path / "image.tar", _layers(tarballs), HISTORY)
    cut = tmp_path / "cut.tar"
    cut.write_bytes(path.read_bytes()[:512])  # the first header only: no content, no index
    with pytest.raises(
        ImageTarError,
        match=r"cut\.tar: truncated or damaged after 0 entries \('oci-layout' claims 31 bytes, "
        r"past the end of the file\)",
    ):
        inspect_image(cut)


def test_damaged_gzip_layer_names_the_layer(tarballs: ModuleType, tmp_path: Path) -> None:
    good = tarballs.layer({f"f{i}": b"y" * 1000 for i in range(20)}, "gzip")
    path = tarballs.docker_save(tmp_path / "image.tar", [good[: len(good) // 2]], ["RUN x"])
    with pytest.raises(ImageTarError, match=r"layer 1 \(.*layer.tar\) is truncated or damaged"):
        inspect_image(path)


def test_not_a_tar_file(tmp_path: Path) -> None:
    path = tmp_path / "notes.tar"
    path.write_text("hello, this is not a tarball\n" * 40)
    with pytest.raises(ImageTarError, match=r"notes\.tar: not a readable tar file"):
        inspect_image(path)


def test_a_tar_that_is_not_an_image(tmp_path: Path) -> None:
    source = tmp_path / "readme.txt"
    source.write_text("hi")
    path = tmp_path / "plain.tar"
    with tarfile.open(path, "w") as tar:
        tar.add(source, arcname="readme.txt")
    with pytest.raises(ImageTarError, match=r"not an image tarball: no manifest\.json"):
        inspect_image(path)


def test_gzipped_outer_tarball_is_refused_with_the_fix(
    tarballs: ModuleType, tmp_path: Path
) -> None:
    path = tarballs.docker_save(tmp_path / "image.tar", _layers(tarballs), HISTORY)
    zipped = tmp_path / "image.tar.gz"
    zipped.write_bytes(gzip.compress(path.read_bytes()))
    with pytest.raises(ImageTarError) as caught:
        inspect_image(zipped)
    assert (
        caught.value.hint
        == f"decompress it first: gunzip -k {zipped} (or docker save without | gzip)"
    )


def test_bzip2_layer_is_named_unsupported(tarballs: ModuleType, tmp_path: Path) -> None:
    import bz2

    layer = bz2.compress(tarballs.layer({"a": b"1"}))
    path = tarballs.docker_save(tmp_path / "image.tar", [layer], ["RUN x"])
    with pytest.raises(ImageTarError, match="is bzip2-compressed, which majob does not read"):
        inspect_image(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(ImageTarError, match="cannot read"):
        inspect_image(tmp_path / "absent.tar")


def test_index_of_the_wrong_shape(tmp_path: Path) -> None:
    path = tmp_path / "odd.tar"
    data = json.dumps({"manifests": [{"no-digest": 1}]}).encode()
    with tarfile.open(path, "w") as tar:
        info = tarfile.TarInfo("index.json")
        info.size = len(data)
        tar.addfile(info, io.BytesIO(data))
    with pytest.raises(
        ImageTarError,
        match=r"index\.json or an image manifest has an unexpected shape \(KeyError: 'digest'\)",
    ):
        inspect_image(path)


def test_truncated_zstd_layer(tarballs: ModuleType, tmp_path: Path) -> None:
    good = tarballs.layer({f"f{i}": b"y" * 1000 for i in range(20)}, "zstd")
    path = tarballs.oci_layout(tmp_path / "image.tar", [good[: len(good) // 2]], ["RUN x"])
    with pytest.raises(
        ImageTarError, match=r"layer 1 \(blobs/sha256/\w+\) is truncated or damaged"
    ):
        inspect_image(path)

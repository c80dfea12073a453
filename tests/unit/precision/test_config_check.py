"""The configuration check: the node's pack (config_pack.py) and the one table of what differs
(config_table.py), in the text, JSON and HTML of ``majob compare``, with bad packs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from majob.cli.app import app
from majob.precision import config_pack
from majob.precision.compare import compare_runs, to_json
from majob.precision.config_table import UNKNOWN, config_table
from majob.precision.html import render
from majob.precision.sources import RunDump


def pack(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "format": config_pack.FORMAT,
        "version": config_pack.VERSION,
        "majob": "0.1.0",
        "msprobe": "26.2.0",
        "python": "3.11.7",
        "env": {"PYTHONHASHSEED": "1234"},
        "packages": {"torch": "2.13.0", "numpy": "2.1.0", "six": "1.16"},
        "hyperparameters": {"lr": "0.01", "epochs": "1"},
        "inputs": {"data_url": {"digest": "aaaa", "files": 3, "bytes": 10, "sampled": False}},
        "code": {"digest": "cccc", "files": 2},
        "seeds": {"majob_seed": 1234, "torch_state": "ffff", "deterministic_algorithms": True},
        "weights": {"digest": "wwww", "tensors": 6},
        "msprobe_check": {"dataset": {"args": {"0": {"max": 1.0, "min": 0.0, "mean": 0.5}}}},
    }
    return base | changes


def dump(root: Path, name: str, the_pack: Any = None, spec: dict[str, Any] | None = None) -> Path:
    where = root / name
    where.mkdir(parents=True)
    record = spec if spec is not None else {"name": "p", "hyperparameters": {"lr": 0.01}}
    (where / "run-spec.json").write_text(json.dumps(record))
    (where / "loss-rank0.jsonl").write_text('{"step": 0, "loss": 1.0}\n')
    if isinstance(the_pack, str):
        (where / "config-rank0.json").write_text(the_pack)
    elif the_pack is not None:
        (where / "config-rank0.json").write_text(json.dumps(the_pack))
    return where


def test_the_table_merges_spec_and_pack_into_one_line_of_differences(tmp_path: Path) -> None:
    a = dump(tmp_path, "a", pack(packages={"torch": "2.1.0", "numpy": "2.1.0"}, python="3.9.1"))
    b_pack = pack(
        inputs={"data_url": {"digest": "bbbb", "files": 3}}, hyperparameters={"lr": "0.02"}
    )
    b = dump(tmp_path, "b", b_pack, {"name": "p", "hyperparameters": {"lr": 0.02}})
    table = config_table((a, b))
    first = table.summary().splitlines()[0]
    assert first == (
        "these differ: lr 0.01 vs 0.02; python 3.9.1 vs 3.11.7; torch 2.1.0 vs 2.13.0; 1 other packages differ (the table "
        "names them); --epochs 1 vs (not set); dataset --data_url differs"
    )
    assert "dataset --data_url differs" in first
    assert [r.what for r in table.rows].count("hyperparameters.lr") == 1  # not again as --lr
    assert "--lr" not in [r.what for r in table.rows]
    deterministic = next(r for r in table.rows if r.what == "precision.deterministic")
    assert (deterministic.a, deterministic.b) == ("no", "no")  # absent means false, shown anyway
    assert "precision.deterministic" not in first


def test_deterministic_is_read_from_each_sides_run_spec(tmp_path: Path) -> None:
    a = dump(tmp_path, "a", pack(), {"name": "p"})
    b = dump(tmp_path, "b", pack(), {"name": "p", "precision": {"deterministic": True}})
    table = config_table((a, b))
    row = next(r for r in table.rows if r.what == "precision.deterministic")
    assert (row.a, row.b, row.source) == ("no", "yes", "spec")
    assert table.summary().startswith("these differ: precision.deterministic no vs yes")


def test_a_side_without_a_pack_keeps_the_spec_rows_and_says_what_is_unknown(
    tmp_path: Path,
) -> None:
    a = dump(tmp_path, "a", None)  # an older dump
    b = dump(tmp_path, "b", pack(), {"name": "p", "hyperparameters": {"lr": 0.02}})
    table = config_table((a, b))
    assert table.summary().splitlines()[0] == "these differ: lr 0.01 vs 0.02"
    assert any(line.startswith("A: no configuration pack") for line in table.unknown)
    assert "unknown: A: no configuration pack" in table.summary()
    assert "no difference" not in table.summary()
    no_spec = config_table((dump(tmp_path, "c", pack()), tmp_path / "nothing"))
    assert any(r.what == "precision.deterministic" and r.b == UNKNOWN for r in no_spec.rows)
    assert any("run-spec.json" in line for line in no_spec.unknown)


def test_packs_of_other_versions_and_corrupt_packs_are_warnings(tmp_path: Path) -> None:
    a = dump(tmp_path, "a", pack(version=2, msprobe="8.1.0", majob="0.2.0"))
    b = dump(tmp_path, "b", pack())
    warnings = config_table((a, b)).warnings
    assert any("pack format 2" in w for w in warnings)
    assert any("different msprobe versions (8.1.0 and 26.2.0)" in w for w in warnings)
    assert any("different majob versions" in w for w in warnings)
    for text, says in (
        ('{"format": "majob-config-pack", "vers', "cannot be read"),
        ("[1, 2]", "is not a majob configuration pack"),
        ('{"format": "majob-config-pack", "version": 1, "error": "OSError: x"}', "could not"),
    ):
        corrupt = dump(tmp_path / says, "c", text)
        table = config_table((corrupt, b))
        assert any(says in w for w in table.warnings), table.warnings
        assert "unknown: A: no configuration pack" in table.summary()


def test_compare_shows_the_table_first_and_goes_on_past_a_corrupt_pack(tmp_path: Path) -> None:
    a = dump(tmp_path, "a", "\x00not json")
    b = dump(tmp_path, "b", pack())
    result = CliRunner().invoke(app, ["compare", str(a), str(b)])
    assert result.exit_code == 0, result.output  # the losses agree: the warning does not fail it
    lines = result.output.splitlines()
    assert lines[0].startswith("configuration: no difference found")
    assert any(line.startswith("warning: A: config-rank0.json cannot be read") for line in lines)
    report = compare_runs(RunDump("a", a, a), RunDump("b", b, b), tmp_path / "scratch")
    shown = to_json(report)["configuration"]
    assert isinstance(shown, dict) and shown["warnings"]
    page = render(report)
    assert page.index('id="config-summary"') < page.index('id="counts"')
    assert 'id="configuration"' in page and "cannot be read" in page
    card = report._repr_html_()  # the notebook's view: the verdict, then what went in
    assert card.index("majob compare: pass") < card.index('id="config-summary"')


def test_credentials_are_masked_on_the_node_and_again_on_the_host(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert config_pack.masked("HCCL_AUTH_TOKEN", "abc") == "***"
    assert config_pack.masked("NCCL_X", "AKIAIOSFODNN7EXAMPLE") == "***"  # shaped like an AK
    assert config_pack.masked("OMP_NUM_THREADS", "4") == "4"
    hyper, paths = config_pack._arguments(
        ["--lr=0.1", "--api_key", "s3cr3t", "--data_url=/", "--flag", "--rank=0"]
    )
    assert hyper == {"lr": "0.1", "api_key": "***", "flag": "true"}
    assert paths == {"data_url": "/"}
    leaky = pack(env={"TORCH_SECRET": "hunter22"})
    table = config_table((dump(tmp_path, "a", leaky), dump(tmp_path, "b", pack())))
    assert "hunter22" not in json.dumps(table.to_json())


def test_data_digests_are_bounded_and_ignore_mtimes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.setattr(config_pack, "WHOLE_FILE", 8)
    monkeypatch.setattr(config_pack, "SAMPLE", 4)
    for name in ("x", "y"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "big.bin").write_bytes(b"head" + b"." * 100 + b"tail")
    os.utime(tmp_path / "y" / "big.bin", (1, 1))
    x, y = (
        config_pack.tree_digest(str(tmp_path / "x")),
        config_pack.tree_digest(str(tmp_path / "y")),
    )
    assert x == y and x["sampled"] and x["files"] == 1 and x["bytes"] == 108
    (tmp_path / "y" / "big.bin").write_bytes(b"head" + b"." * 100 + b"TAIL")
    assert config_pack.tree_digest(str(tmp_path / "y"))["digest"] != x["digest"]


def test_the_node_writes_its_pack_with_msprobes_features(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    torch = pytest.importorskip("torch")
    monkeypatch.setenv("HCCL_SECRET_KEY", "value-of-a-secret")
    monkeypatch.setattr("sys.argv", ["train.py", "--lr=0.1", f"--data_url={tmp_path}"])
    model = torch.nn.Linear(3, 2)
    config = {"dump_path": str(tmp_path / "out" / "precision-dump"), "seed": 7}
    config_pack.collect(config, model, (torch.ones(2, 3),), {}, "0")
    written = json.loads((tmp_path / "out" / "precision-dump" / "config-rank0.json").read_text())
    assert written["format"] == config_pack.FORMAT and "error" not in written
    assert written["env"]["HCCL_SECRET_KEY"] == "***"
    assert written["hyperparameters"] == {"lr": "0.1"}
    assert set(written["inputs"]) == set()  # the dump's own output dir is not an input
    assert written["packages"]["torch"] and written["weights"]["tensors"] == 2
    assert written["seeds"]["majob_seed"] == 7 and "torch_state" in written["seeds"]
    features = written["msprobe_check"]
    assert "error" not in features, features
    assert features["dataset"]["args"]["0"]["max"] == 1.0


def test_submit_dump_stages_the_pack_writer_beside_the_bootstrap(tmp_path: Path) -> None:
    from majob.precision.staging import staged_for_dump
    from majob.spec.load import load_spec
    from majob.version import __version__

    (tmp_path / "code").mkdir()
    (tmp_path / "code" / "train.py").write_text("")
    (tmp_path / "spec.yaml").write_text(
        "name: p\ncode: {dir: code, boot_file: train.py}\n"
        "image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}\n"
        'resources: {flavor: modelarts.vm.cpu.8u}\noutputs: [{name: train_url, obs: "obs://bkt/o/"}]\n'
    )
    staged = staged_for_dump(load_spec(tmp_path / "spec.yaml"), tmp_path / "staging")
    tools = Path(staged.code.dir) / "majob_precision"
    assert (tools / "config_pack.py").read_text() == Path(config_pack.__file__).read_text()
    assert json.loads((tools / "settings.json").read_text())["majob_version"] == __version__

"""Corpus scripts after the full chain (cloud-paths, ddp, npu-manual) train on 2 local nodes as an
Ascend job on the CPU stand-in, and only global rank 0 writes checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest

from majob.migrate.rewrite import migrate_source
from majob.migrate.rules import Codemod
from majob.runner.local import run_local
from majob.spec.load import load_spec

CORPUS = Path(__file__).resolve().parents[1] / "migrate_corpus"
CHAIN = (Codemod.CLOUD_PATHS, Codemod.DDP, Codemod.NPU_MANUAL)

# Counts each torch.save per node (VC_TASK_INDEX), then runs the migrated script as __main__.
WRAPPER = """\
import os, runpy, sys
import torch
_save = torch.save
def _counted(obj, f, *args, **kwargs):
    node = os.environ.get("VC_TASK_INDEX", "?")
    with open(os.path.join(os.environ["SAVE_LOG"], "saves-" + node), "a") as log:
        log.write(str(f) + "\\n")
    return _save(obj, f, *args, **kwargs)
torch.save = _counted
script = os.path.join(os.path.dirname(os.path.abspath(__file__)), "train.py")
sys.argv[0] = script
runpy.run_path(script, run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cifar_style", "dp_resume"])
def test_chain_output_trains_on_two_nodes_and_rank_0_saves(tmp_path: Path, name: str) -> None:
    source = (CORPUS / f"{name}.py").read_text(encoding="utf-8")
    for codemod in CHAIN:
        source, missed = migrate_source(source, codemod, f"{name}.py")
        assert missed == []
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text(source, encoding="utf-8")
    (code / "run.py").write_text(WRAPPER, encoding="utf-8")
    saves = tmp_path / "saves"
    saves.mkdir()
    spec_file = tmp_path / "spec.yaml"
    spec_file.write_text(
        f"name: corpus-{name.replace('_', '-')}\ncode: {{dir: code, boot_file: run.py}}\n"
        "image: {engine: Ascend-Powered-Engine, "
        "version: pytorch_2.1.0-cann_8.0.rc1-py_3.9-euler_2.10.7-aarch64}\n"
        "resources: {flavor: modelarts.bm.snt9.xlarge.8, nodes: 2}\n"
        f"outputs: [{{name: train_url, obs: 'obs://bucket/out/', local: '{tmp_path / 'out'}'}}]\n"
        f"distributed: {{backend: hccl}}\nenv: {{OMP_NUM_THREADS: 1, SAVE_LOG: '{saves}'}}\n"
    )
    lines: list[str] = []
    result = run_local(load_spec(spec_file), runs_dir=tmp_path / "runs", on_line=lines.append)
    assert result.ok, "\n".join(lines[-30:])
    assert sorted(p.name for p in saves.iterdir()) == ["saves-0"]  # node 1 never saved
    assert list((tmp_path / "out").iterdir())  # the checkpoint reached the output

"""``majob migrate --to resume`` proven by running: the rewritten script, killed in the middle of
its training, carries on from its newest checkpoint when it starts again (the printed epochs
continue), also when the newest file was cut short; and it runs as a job under the local runner
with the guard strict."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

from majob.migrate.checker import check_source
from majob.migrate.rewrite import migrate_source
from majob.migrate.rules import Codemod
from majob.runner.local import run_local
from majob.spec.load import load_spec

BEFORE = """\
import argparse
import os
import time

import torch
import torch.nn.functional as F

parser = argparse.ArgumentParser()
parser.add_argument("--data_url", default="data")
parser.add_argument("--train_url", default="output")
parser.add_argument("--epochs", type=int, default=3)
parser.add_argument("--pause", type=float, default=0.0)
args, _unknown = parser.parse_known_args()
torch.manual_seed(0)
model = torch.nn.Linear(8, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
ckpt_dir = os.path.join(args.train_url, "ckpt")
os.makedirs(ckpt_dir, exist_ok=True)
for epoch in range(args.epochs):
    optimizer.zero_grad()
    F.cross_entropy(model(torch.randn(16, 8)), torch.randint(0, 2, (16,))).backward()
    optimizer.step()
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
    torch.save(state, os.path.join(ckpt_dir, f"epoch_{epoch}.pt"))
    print(f"epoch {epoch}", flush=True)
    time.sleep(args.pause)
"""

SPEC = """\
name: resume-proof
code: {dir: code, boot_file: train.py}
image: {engine: PyTorch, version: pytorch_2.1.0}
resources: {flavor: modelarts.vm.cpu.8u}
outputs:
  - {name: train_url, obs: "obs://bucket/out/", local: out}
hyperparameters: {epochs: 2}
fault_tolerance: {retries: 2, checkpoints: train_url/ckpt/}
"""


def _migrated(tmp_path: Path) -> Path:
    after, missed = migrate_source(BEFORE, Codemod.RESUME, "train.py")
    assert missed == []
    left = {f.rule for f in check_source(after, "train.py").findings}
    assert {"MA401", "MA403"} & left == set()
    code = tmp_path / "code"
    code.mkdir()
    (code / "train.py").write_text(after, encoding="utf-8")
    return code / "train.py"


def _epochs(output: str) -> list[int]:
    return [int(line.split()[1]) for line in output.splitlines() if line.startswith("epoch ")]


def test_a_killed_run_carries_on_from_its_newest_readable_checkpoint(tmp_path: Path) -> None:
    script = _migrated(tmp_path)
    out = tmp_path / "out"
    command = [sys.executable, str(script), f"--train_url={out}", "--pause=0.2"]
    with subprocess.Popen(
        [*command, "--epochs=1000"], stdout=subprocess.PIPE, text=True, start_new_session=True
    ) as first:
        assert first.stdout is not None
        seen = []
        for line in first.stdout:  # killed once it has saved three epochs: a node that dies
            seen.append(line)
            if line.startswith("epoch 2"):
                break
        os.killpg(first.pid, signal.SIGKILL)
    killed_at = max(_epochs("".join(seen)))
    saved = sorted((out / "ckpt").glob("epoch_*.pt"), key=lambda p: (len(p.name), p.name))
    newest = int(saved[-1].stem.split("_")[1])
    assert newest >= killed_at  # the kill may land after the next save: none is half-written
    # a newer file that a kill cut short (a save that was not atomic): skipped, not loaded
    (out / "ckpt" / f"epoch_{newest + 1}.pt").write_bytes(b"PK\x03\x04 cut short")

    second = subprocess.run(
        [*command, f"--epochs={newest + 3}"], capture_output=True, text=True, check=True
    )
    assert f"resume: skipping epoch_{newest + 1}.pt" in second.stdout
    assert f"resume: epoch_{newest}.pt, from epoch {newest + 1}" in second.stdout
    assert _epochs(second.stdout) == [newest + 1, newest + 2]


def test_the_rewritten_script_runs_as_a_job_and_resumes_nothing_on_a_first_start(
    tmp_path: Path,
) -> None:
    _migrated(tmp_path)
    (tmp_path / "spec.yaml").write_text(SPEC, encoding="utf-8")
    spec = load_spec(tmp_path / "spec.yaml")
    lines: list[str] = []
    result = run_local(spec, runs_dir=tmp_path / "runs", strict=True, on_line=lines.append)
    assert result.status == "passed"
    assert _epochs("\n".join(line.split("] ", 1)[-1] for line in lines)) == [0, 1]
    assert sorted(p.name for p in (tmp_path / "out" / "ckpt").iterdir()) == [
        "epoch_0.pt",
        "epoch_1.pt",
    ]

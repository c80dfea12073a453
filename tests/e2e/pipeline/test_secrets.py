"""A token passed as ``${TOKEN}`` reaches the job and nothing else: through every command that
reads the spec, the value is in no output and in no file majob or the emulator writes; the
ledger holds the reference, so a rotated token keeps every gate open."""

from __future__ import annotations

import hashlib
import secrets
from pathlib import Path

import pytest
from typer.testing import CliRunner, Result

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud

runner = CliRunner()

# The job proves it got the token (argument and variable agree, and match its digest, given
# as a second variable) without ever printing it.
SCRIPT = """\
import argparse, hashlib, os
parser = argparse.ArgumentParser()
parser.add_argument("--data_url")
parser.add_argument("--train_url")
parser.add_argument("--token")
parser.add_argument("--token_sha256")
args, _ = parser.parse_known_args()
assert args.token == os.environ["API_TOKEN"].removeprefix("Bearer "), "the two differ"
assert hashlib.sha256(args.token.encode()).hexdigest() == args.token_sha256, "wrong token"
with open(os.path.join(args.data_url, "in.txt")) as source:
    loss = float(source.read())
for epoch in range(2):
    loss /= 2
    print(f"epoch {epoch} loss={loss}", flush=True)
with open(os.path.join(args.train_url, "model.pth"), "w") as out:
    out.write(str(loss))
"""

# What `majob run --dump` records for `majob compare`: a tiny model, two optimizer steps.
TORCH_SCRIPT = """\
import argparse, os
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
torch.manual_seed(0)
model = torch.nn.Linear(4, 1)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(2):
    optimizer.zero_grad()
    loss = (model(torch.ones(8, 4)) ** 2).mean()
    loss.backward()
    optimizer.step()
    print(f"step {step} loss={loss.item():.4f}", flush=True)
torch.save(model.state_dict(), os.path.join(args.train_url, "model.pth"))
"""

SPEC = """\
name: secret
code: {dir: code, boot_file: train.py, obs: "obs://majob-demo/secret/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u, nodes: 1}
inputs:
  - {name: data_url, obs: "obs://majob-demo/secret/data/", local: data}
outputs:
  - {name: train_url, obs: "obs://majob-demo/secret/out/", local: out}
hyperparameters: {token: "${TOKEN}", token_sha256: "${TOKEN_SHA256}", epochs: 2}
env: {API_TOKEN: "Bearer ${TOKEN}"}
metrics: {loss: 'loss=([0-9.]+)'}
expect: {outputs: [model.pth]}
"""


def cli(said: list[str], *args: str) -> Result:
    result = runner.invoke(app, list(args))
    said.append(result.stdout + result.stderr)
    assert result.exit_code == 0, result.output
    return result


def run_id(result: Result) -> str:
    line = next(line for line in result.stdout.splitlines() if line.startswith("run "))
    return line.split()[1].rstrip(":")


@pytest.mark.slow
def test_a_token_reaches_the_job_and_nothing_else(
    tmp_path: Path, project: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytest.importorskip("msprobe", reason="mindstudio-probe is not installed (majob[precision])")
    # Distinctive and random: a hit can only be a leak.
    first, rotated = (f"tok-{secrets.token_hex(16)}" for _ in range(2))
    (project / "code" / "train.py").write_text(SCRIPT)
    (project / "code" / "torch_train.py").write_text(TORCH_SCRIPT)
    spec = "secret.yaml"
    (project / spec).write_text(SPEC)
    said: list[str] = []

    def with_token(token: str) -> None:
        monkeypatch.setenv("TOKEN", token)
        monkeypatch.setenv("TOKEN_SHA256", hashlib.sha256(token.encode()).hexdigest())

    with_token(first)
    cli(said, "validate", spec)
    shown = [
        cli(said, "compile", spec).stdout,
        cli(said, "compile", spec, "--target", "sdk").stdout,
        cli(said, "compile", spec, "--target", "sdk", "--format", "python").stdout,
        cli(said, "submit", spec, "--profile", "emulator", "--upload-inputs", "--dry-run").stdout,
    ]
    assert all("***" in text for text in shown)
    cli(said, "run", spec)
    dumped = ["--dump", "--set", "code.boot_file=torch_train.py"]
    golden = run_id(cli(said, "run", spec, *dumped))
    target = run_id(cli(said, "run", spec, *dumped))
    cli(said, "compare", golden, target, "--spec", "secret")
    # A real submit: the job checks the token it got (the emulated job fails otherwise).
    cli(said, "submit", spec, "--profile", "emulator", "--upload-inputs", "--wait")
    # The ended debug job holds its name until deleted (ModelArts.2751): the pipeline's debug
    # stage makes its own.
    cli(said, "delete", "secret-debug", "--profile", "emulator")
    cli(said, "pipeline", spec, "--profile", "emulator")

    # Rotating the token changes no digest: nothing runs again, the formal gate stays open.
    with_token(rotated)
    again = cli(said, "pipeline", spec, "--profile", "emulator")
    assert "nothing to run" in again.stdout.splitlines()[-1], again.stdout
    gate = cli(said, "submit", spec, "--stage", "formal", "--profile", "emulator", "--dry-run")
    assert "formal gate: open" in gate.stdout, gate.stdout
    cli(said, "history", spec)
    cli(said, "history", spec, "--format", "json")
    cli(said, "checklist", spec)
    cli(said, "checklist", spec, "--format", "json")

    printed = "\n".join(said)
    written = {
        path: path.read_bytes()
        for root in (project / ".majob", cloud.state_dir, tmp_path)
        for path in root.rglob("*")
        if path.is_file()
    }
    assert (project / ".majob" / "ledger.db") in written
    assert any(cloud.state_dir in path.parents for path in written)
    for token in (first, rotated):
        assert token not in printed
        leaks = [str(path) for path, data in written.items() if token.encode() in data]
        assert leaks == []


# Prints its token, then fails when told: what the job writes is its own business, what majob
# shows and keeps of it is not.
LEAKY_SCRIPT = """\
import argparse, os, sys
parser = argparse.ArgumentParser()
parser.add_argument("--train_url")
parser.add_argument("--token")
parser.add_argument("--fail", type=int, default=0)
args, _ = parser.parse_known_args()
print(f"using {args.token}", flush=True)
open(os.path.join(args.train_url, "model.pth"), "w").write("0")
sys.exit(args.fail)
"""

LEAKY_SPEC = """\
name: leaky
code: {dir: code, boot_file: leaky.py, obs: "obs://majob-demo/leaky/code/"}
image: {engine: PyTorch, version: pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64}
resources: {flavor: modelarts.vm.cpu.8u, nodes: 1}
outputs:
  - {name: train_url, obs: "obs://majob-demo/leaky/out/", local: out}
hyperparameters: {token: "${TOKEN}", fail: 3}
stages:
  local: {hyperparameters: {fail: 0}}
"""


def test_log_lines_of_a_job_that_prints_its_token_are_masked(
    project: Path, cloud: EmulatedCloud, monkeypatch: pytest.MonkeyPatch
) -> None:
    token = f"tok-{secrets.token_hex(16)}"
    monkeypatch.setenv("TOKEN", token)
    (project / "code" / "leaky.py").write_text(LEAKY_SCRIPT)
    (project / "leaky.yaml").write_text(LEAKY_SPEC)
    waited = runner.invoke(app, ["submit", "leaky.yaml", "--profile", "emulator", "--wait"])
    assert waited.exit_code == 1, waited.output
    assert "[worker-0] using ***" in waited.stdout  # as it came
    assert "  using ***" in waited.stderr  # among the failed task's last lines
    # The ended job holds its name until deleted (ModelArts.2751).
    assert runner.invoke(app, ["delete", "leaky-debug", "--profile", "emulator"]).exit_code == 0
    piped = runner.invoke(app, ["pipeline", "leaky.yaml", "--profile", "emulator"])
    assert piped.exit_code == 1, piped.output
    assert "[worker-0] using ***" in piped.stdout  # locally, and from the debug job
    ledger = (project / ".majob" / "ledger.db").read_bytes()
    assert b"using ***" in ledger  # the debug stage's reason quotes the last lines
    for text in (waited.output, piped.output):
        assert token not in text
    assert token.encode() not in ledger

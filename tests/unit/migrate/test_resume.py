"""The resume rules and ``--to resume`` on small scripts: what is rewritten, what is left with
its reason, and what a check after the rewrite still reports."""

from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.migrate.checker import check_source
from majob.migrate.rewrite import migrate_source
from majob.migrate.rules import Codemod

HEAD = """\
import argparse
import os
import torch
parser = argparse.ArgumentParser()
parser.add_argument("--train_url")
args, _ = parser.parse_known_args()
model = torch.nn.Linear(2, 2)
optimizer = torch.optim.SGD(model.parameters(), lr=0.1)
"""

CLEAR = HEAD + textwrap.dedent(
    """\
    for epoch in range(5):
        state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
        torch.save(state, os.path.join(args.train_url, "ckpt", "last.pt"))
    torch.save(model.state_dict(), "final.pt")
    """
)


def _findings(source: str, checkpoints: tuple[str, str] | None = None) -> dict[str, str]:
    report = check_source(source, "t.py", checkpoints=checkpoints)
    return {f.rule: f.message for f in report.findings if f.rule.startswith("MA4")}


def test_the_rewrite_parses_is_idempotent_and_leaves_only_what_it_cannot_fix() -> None:
    after, missed = migrate_source(CLEAR, Codemod.RESUME)
    assert missed == []
    ast.parse(after)
    assert migrate_source(after, Codemod.RESUME)[0] == after
    assert "for epoch in range(first_epoch, 5):" in after
    assert 'if name == "last.pt"' in after
    assert "os.replace(" in after
    before_rules = {f.rule for f in check_source(CLEAR, "t.py").findings}
    after_rules = {f.rule for f in check_source(after, "t.py").findings}
    assert {"MA401", "MA403"} <= before_rules
    assert before_rules - after_rules == {"MA401", "MA403"}
    assert "MA102" in after_rules  # final.pt in the working directory: cloud-paths' part


def test_a_checkpoint_without_the_optimizer_is_left_with_the_reason() -> None:
    source = HEAD + textwrap.dedent(
        """\
        for epoch in range(5):
            torch.save({"epoch": epoch, "model": model.state_dict()}, os.path.join(args.train_url, "m.pt"))
        """
    )
    message = _findings(source)["MA401"]
    assert "no optimizer state" in message
    assert "add the load by hand" in message
    after, _ = migrate_source(source, Codemod.RESUME)
    assert "torch.load" not in after  # not rewritten, but the save is made atomic
    assert "MA401" in _findings(after)
    assert "MA403" not in _findings(after)


def test_a_save_in_a_helper_the_loop_calls_is_a_per_epoch_save() -> None:
    source = HEAD + textwrap.dedent(
        """\
        def save_checkpoint(state, filename):
            torch.save(state, filename)
        for epoch in range(5):
            save_checkpoint({"epoch": epoch}, "c.pt")
        """
    )
    found = _findings(source)
    assert "the save runs in a function the epoch loop calls" in found["MA401"]
    assert "MA403" in found


def test_outside_the_checkpoint_folder_only_with_a_spec() -> None:
    source = HEAD + textwrap.dedent(
        """\
        for epoch in range(5):
            torch.save(model, os.path.join(args.train_url, "m.pt"))
            torch.save(model, os.path.join(args.log_url, "ckpt", "m.pt"))
        """
    )
    assert "MA402" not in _findings(source)
    report = check_source(source, "t.py", checkpoints=("train_url", "ckpt"))
    messages = [f.message for f in report.findings if f.rule == "MA402"]
    assert len(messages) == 2
    assert "saved to train_url/m.pt, the spec keeps train_url/ckpt/" in messages[0]
    assert "saved under args.log_url" in messages[1]


def test_check_reads_the_checkpoint_folder_from_the_spec(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        HEAD
        + "for epoch in range(5):\n    torch.save(model, os.path.join(args.train_url, 'm.pt'))\n",
        encoding="utf-8",
    )
    spec = tmp_path / "job.yaml"
    base = (
        "name: t\ncode: {dir: ., boot_file: train.py}\n"
        "image: {engine: PyTorch, version: pytorch_2.1.0}\n"
        "resources: {flavor: modelarts.vm.cpu.8u}\n"
        "outputs:\n  - {name: train_url, obs: 'obs://bucket/out/'}\n"
    )
    spec.write_text(base + "fault_tolerance: {retries: 1, checkpoints: train_url/ckpt/}\n")
    runner = CliRunner()
    result = runner.invoke(app, ["check", str(script), "--spec", str(spec), "--fail-on", "never"])
    assert result.exit_code == 0, result.output
    assert "MA402" in result.output and "train_url/ckpt/" in result.output
    spec.write_text(base)
    result = runner.invoke(app, ["check", str(script), "--spec", str(spec), "--fail-on", "never"])
    assert "MA402" not in result.output


def test_a_resume_read_outside_the_checkpoint_folder_with_a_spec() -> None:
    """cloud-paths keeps ./checkpoint/ckpt.pth as <train_url>/checkpoint/ckpt.pth: with a spec
    whose checkpoint folder is another, the restarted job reads a folder nobody downloaded."""
    source = HEAD + textwrap.dedent(
        """\
        if os.path.isdir(os.path.join(args.train_url, "checkpoint")):
            model.load_state_dict(torch.load(os.path.join(args.train_url, "checkpoint/ckpt.pth")))
        data = torch.load(os.path.join(args.data_url, "x.pt"))
        """
    )
    assert "MA402" not in _findings(source)
    assert "MA402" not in _findings(source, ("train_url", "checkpoint"))
    found = _findings(source, ("train_url", "ckpt"))["MA402"]
    assert "resumes from train_url/checkpoint/ckpt.pth, the spec keeps train_url/ckpt/" in found


def test_a_folder_named_inside_the_loop_is_left() -> None:
    """The block runs before the loop: a folder variable set in the loop does not exist yet."""
    source = HEAD + textwrap.dedent(
        """\
        for epoch in range(5):
            folder = os.path.join(args.train_url, "ckpt")
            state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict()}
            torch.save(state, os.path.join(folder, "last.pt"))
        """
    )
    assert "the checkpoint folder is named inside the loop" in _findings(source)["MA401"]


def test_migrate_says_what_it_left_and_why(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        HEAD + "for epoch in range(5):\n"
        "    torch.save(model.state_dict(), os.path.join(args.train_url, 'm.pt'))\n",
        encoding="utf-8",
    )
    result = CliRunner().invoke(app, ["migrate", str(script), "--to", "resume"])
    assert result.exit_code == 0, result.output
    assert f"left: {script}:10:5: MA401 " in result.stderr
    assert "not rewritten (the checkpoint is not a dict" in result.stderr
    assert "os.replace(" in result.stdout  # the atomic save is still made


def test_a_loop_over_training_steps_saves_checkpoints_too() -> None:
    stepped = HEAD + textwrap.dedent(
        """\
        for iteration in range(1000):
            if iteration % 100 == 0:
                torch.save(model.state_dict(), os.path.join(args.train_url, "last.pt"))
        """
    )
    found = _findings(stepped)
    assert "the loop is over steps, not epochs" in found["MA401"]
    assert "MA403" in found
    samples = HEAD + "for i in range(10):\n    torch.save(torch.randn(2), f'sample_{i}.pt')\n"
    assert _findings(samples) == {}

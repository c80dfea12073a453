"""The README's quick-start block, run as a newcomer runs it: on a fresh copy of the project,
every command in order, each one succeeding (``set -e``: the first that fails stops the block
and the test names it). It starts the emulated cloud and trains the examples: a few minutes.
"""

from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from majob.pipeline.ledger import LEDGER_VARIABLE

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1500)]

ROOT = Path(__file__).resolve().parents[2]
MARK = ":::readme:::"
# What a fresh clone has not: the venv, caches, runs and outputs of this checkout.
NOT_IN_A_CLONE = shutil.ignore_patterns(
    ".git", ".venv", ".majob", "out", "*.egg-info", "__pycache__", ".*_cache", ".hypothesis"
)


def quick_start_block() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("## Quick start", 1)[1]
    found = re.search(r"```sh\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the README's quick start has no ```sh block"
    return found.group(1)


def as_script(block: str) -> str:
    """The block verbatim, each command announced first, so a failure names its command."""
    lines = ["set -euo pipefail"]
    for line in block.splitlines():
        command = line.strip()
        if command and not command.startswith("#"):
            lines.append(f"echo {MARK} {shlex.quote(command)}")
        lines.append(line)
    return "\n".join(lines) + "\n"


def test_the_readme_quick_start_runs_top_to_bottom_on_a_fresh_copy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project = tmp_path / "majob"
    shutil.copytree(ROOT, project, ignore=NOT_IN_A_CLONE)
    (project / ".venv").symlink_to(Path(sys.prefix))  # `. .venv/bin/activate`: this venv
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("HUAWEICLOUD_", "MAJOB_")) and key != LEDGER_VARIABLE
    }
    env.update(  # this test's own emulator, profiles and caches; never the user's
        MAJOB_EMULATOR_DIR=str(tmp_path / "emulator"),
        MAJOB_CONFIG_DIR=str(tmp_path / "config"),
        MAJOB_CACHE_DIR=str(tmp_path / "cache"),
    )
    block = quick_start_block()
    assert "majob emulator start" in block and "majob emulator stop" in block
    try:
        done = subprocess.run(
            ["bash", "-c", as_script(block)],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=1400,
        )
    finally:  # whatever happened, no emulator is left running
        subprocess.run(
            [str(Path(sys.prefix) / "bin" / "majob"), "emulator", "stop"],
            cwd=project, env=env, capture_output=True, timeout=120,
        )  # fmt: skip
    ran = [line.split(MARK, 1)[1].strip() for line in done.stdout.splitlines() if MARK in line]
    assert done.returncode == 0, (
        f"the README's quick start stopped at `{ran[-1] if ran else '?'}` "
        f"(exit {done.returncode}):\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}"
    )
    commands = [
        line for line in block.splitlines() if line.strip() and not line.strip().startswith("#")
    ]
    assert len(ran) == len(commands)  # every command ran, in order
    # `majob obs ls`: what the jobs wrote, each stage in its own folder of the output
    assert "majob/mnist/output/debug/model.pth" in done.stdout
    assert "majob/mnist/output/formal/model.pth" in done.stdout
    assert "majob/mnist/output/model.pth" not in done.stdout
    assert (project / "majob.schema.json").is_file()

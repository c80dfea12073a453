"""A job chooses its output file names; the pipeline names each output object it finds in OBS,
escaped: an ESC sequence in a name never reaches the terminal."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from majob.cli.app import app
from majob.emulator.cloud import EmulatedCloud
from tests.e2e.pipeline.conftest import SCRIPT

runner = CliRunner()
HOSTILE_OUTPUT = """
with open(os.path.join(args.train_url, "clear\\x1b[2J.txt"), "w") as out:
    out.write("x")
"""


def test_output_object_names_are_escaped(project: Path, cloud: EmulatedCloud) -> None:
    (project / "code" / "train.py").write_text(SCRIPT + HOSTILE_OUTPUT)
    result = runner.invoke(
        app,
        ["pipeline", "tiny.yaml", "--profile", "emulator", "--upload-inputs", "--until", "debug"],
    )
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output
    assert (
        "[majob] train_url in OBS: obs://majob-demo/tiny/out/debug/clear\\x1b[2J.txt (1 bytes)"
        in (result.output.splitlines())
    )

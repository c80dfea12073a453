"""``majob init`` writes a spec that validates and runs as it is (init -> validate -> run)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from majob.cli.app import app

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()

OWN_SCRIPT = """\
import argparse, os
parser = argparse.ArgumentParser()
parser.add_argument("--data_dir", required=True)
parser.add_argument("--output_dir", required=True)
parser.add_argument("--epochs", type=int, default=2)
args, _ = parser.parse_known_args()
seen = sorted(os.listdir(args.data_dir))
with open(os.path.join(args.output_dir, "result.txt"), "w") as out:
    out.write(f"epochs={args.epochs} files={seen}")
"""


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("MAJOB_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("MAJOB_PROFILE", raising=False)


def test_init_on_the_mnist_example_validates_and_runs(tmp_path: Path) -> None:
    made = runner.invoke(app, ["init", str(ROOT / "examples/mnist/train.py"), "-o", "job.yaml"])
    assert made.exit_code == 0, made.output
    text = (tmp_path / "job.yaml").read_text()
    # The bundled digits next to the example are found: the script reads digits.npz from there.
    assert "found by majob init" in text
    checked = runner.invoke(app, ["validate", "job.yaml"])
    assert checked.exit_code == 0, checked.output
    assert checked.stdout.startswith("ok: job.yaml: mnist ")
    ran = runner.invoke(app, ["run", "job.yaml", "--set", "hyperparameters.epochs=1"])
    assert ran.exit_code == 0, ran.output
    assert ": passed in " in ran.stdout
    assert (tmp_path / "out" / "train_url" / "model.pth").is_file()


def test_init_on_a_script_of_ones_own_creates_what_it_names(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(OWN_SCRIPT)
    made = runner.invoke(app, ["init", "train.py"])
    assert made.exit_code == 0, made.output
    assert f"created {tmp_path / 'data' / 'data_dir'} (empty)" in made.stdout
    assert (tmp_path / "data" / "data_dir").is_dir()
    checked = runner.invoke(app, ["validate", "majob.yaml"])
    assert checked.exit_code == 0, checked.output
    # The stand-ins live in the code dir: left out of the upload and of each run's code copy.
    (tmp_path / "data" / "data_dir" / "sample.csv").write_text("1,2\n")
    ran = runner.invoke(app, ["run", "majob.yaml"])
    assert ran.exit_code == 0, ran.output
    result = tmp_path / "out" / "output_dir" / "result.txt"
    assert result.read_text() == "epochs=2 files=['sample.csv']"
    (code_copy,) = (tmp_path / ".majob" / "runs").glob("*/ma-user/modelarts/user-job-dir/*")
    assert sorted(p.name for p in code_copy.iterdir()) == ["majob.yaml", "train.py"]


def test_a_second_init_reuses_the_stand_in_it_created(tmp_path: Path) -> None:
    (tmp_path / "train.py").write_text(OWN_SCRIPT)
    assert runner.invoke(app, ["init", "train.py"]).exit_code == 0
    again = runner.invoke(app, ["init", "train.py", "--force"])
    assert again.exit_code == 0, again.output
    assert "created" not in again.stdout
    assert "local: data/data_dir " in (tmp_path / "majob.yaml").read_text()


def test_init_without_a_script_says_what_is_missing(tmp_path: Path) -> None:
    made = runner.invoke(app, ["init"])
    assert made.exit_code == 0, made.output
    assert f"note: {tmp_path / 'train.py'} does not exist yet" in made.stdout
    (tmp_path / "train.py").write_text("print('ok')\n")
    checked = runner.invoke(app, ["validate", "majob.yaml"])
    assert checked.exit_code == 0, checked.output

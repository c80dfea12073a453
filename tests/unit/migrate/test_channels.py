"""The channel arguments a cloud-paths rewrite adds are read: every reported read (or write) of
their kind is rewired in the same rewrite, or nothing of that kind is and check keeps saying so;
and the fixes find the parsed arguments where the script keeps them."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from majob.migrate.checker import check_paths, check_source
from majob.migrate.rewrite import migrate_source, plan
from majob.migrate.rules import Codemod, Target


def _migrated(source: str) -> str:
    return migrate_source(textwrap.dedent(source), Codemod.CLOUD_PATHS)[0]


def _left(source: str) -> list[tuple[str, str]]:
    report = check_source(source, "train.py", Target.GPU)
    return [(f.rule, f.message.rsplit(": ", 1)[-1]) for f in report.findings]


INCOMPLETE = """
import argparse
import numpy as np

def cfg():
    c = object()
    c.OUTPUT_DIR = "./output"
    return c

parser = argparse.ArgumentParser()
args = parser.parse_args()
x = np.load("data/x.npy")
np.save("output/y.npy", x)
"""


def test_a_kind_with_a_write_left_by_hand_gets_no_argument_and_stays_reported() -> None:
    after = _migrated(INCOMPLETE)
    assert "--data_url" in after and "--train_url" not in after
    assert 'np.save("output/y.npy", x)' in after  # not moved to an argument nothing declares
    left = _left(after)
    assert ("MA103", "--train_url") in left
    assert [rule for rule, _ in left].count("MA102") == 2  # the config value and the save


def test_no_argument_is_added_for_a_kind_the_script_never_uses() -> None:
    after = _migrated(
        """
        import argparse
        import torch
        parser = argparse.ArgumentParser()
        args = parser.parse_args()
        torch.save({}, "model.pt")
        """
    )
    assert "--train_url" in after and "--data_url" not in after


def test_the_arguments_go_to_the_parser_whose_result_the_script_uses() -> None:
    after = _migrated(
        """
        import argparse
        import torch
        config_parser = argparse.ArgumentParser(add_help=False)
        config_parser.add_argument("--config", default="")
        parser = argparse.ArgumentParser()
        parser.add_argument("--lr", type=float, default=0.1)
        parser.add_argument("--epochs", type=int, default=1)

        def main():
            cfg, rest = config_parser.parse_known_args()
            args = parser.parse_args(rest)
            torch.save({}, "out/model.pt")
        """
    )
    assert 'parser.add_argument("--train_url"' in after
    assert 'config_parser.add_argument("--train_url"' not in after


def test_arguments_are_followed_into_the_functions_they_are_passed_to() -> None:
    after = _migrated(
        """
        import argparse
        import torch

        def worker(gpu, args):
            torch.save({}, "ckpt/last.pt")

        def main():
            parser = argparse.ArgumentParser()
            args = parser.parse_args()
            worker(0, args)
        """
    )
    assert 'torch.save({}, os.path.join(args.train_url, "last.pt"))' in after


def test_a_cross_file_helper_is_known_in_a_directory_check(tmp_path: Path) -> None:
    (tmp_path / "helpers.py").write_text(
        "import os\n\ndef get_outdir(path, name):\n    os.makedirs(os.path.join(path, name))\n"
    )
    (tmp_path / "train.py").write_text(
        "import argparse\nimport helpers\np = argparse.ArgumentParser()\n"
        "args = p.parse_known_args()[0]\nhelpers.get_outdir('./output/train', 'exp')\n"
    )
    reports = {Path(r.path).name: r for r in check_paths([tmp_path], jobs=1)}
    found = [(f.line, f.rule) for f in reports["train.py"].findings]
    assert found == [(4, "MA103"), (4, "MA103"), (5, "MA102")]
    alone = check_source((tmp_path / "train.py").read_text(), "train.py")
    assert "MA102" not in {f.rule for f in alone.findings}  # the file alone cannot know
    result = plan([tmp_path], Codemod.CLOUD_PATHS, jobs=1)
    after = next(c.after for c in result.changes if c.path.name == "train.py")
    assert 'helpers.get_outdir(os.path.join(args.train_url, "train"), "exp")' in after.replace(
        "'exp'", '"exp"'
    )


def test_a_helper_reading_a_folder_the_script_writes_reads_an_output(tmp_path: Path) -> None:
    # FSDP2's example: a project helper lists the checkpoint folder to resume from; the script
    # saves under the same folder through a constant with fields. The read is the output's.
    (tmp_path / "utils.py").write_text(
        "import os\n\ndef latest(path):\n    return max(os.listdir(path), default=None)\n"
    )
    train = (
        "import os\nimport torch\nfrom utils import latest\n"
        'CHECKPOINT_FOLDER = "checkpoints/{api}/{time}"\n'
        "def main(api):\n"
        '    last = latest(f"READ/{api}")\n'
        "    folder = CHECKPOINT_FOLDER.format(api=api, time=1)\n"
        "    os.makedirs(folder, exist_ok=True)\n"
        '    torch.save({}, f"{folder}/model.pt")\n'
    )
    found = {}
    for read in ("checkpoints", "checkpoint"):  # the second: a folder nothing writes
        (tmp_path / "train.py").write_text(train.replace("READ", read))
        reports = {Path(r.path).name: r for r in check_paths([tmp_path], jobs=1)}
        found[read] = {(f.line, f.rule) for f in reports["train.py"].findings}
    assert (6, "MA102") in found["checkpoints"] and (6, "MA101") not in found["checkpoints"]
    assert (6, "MA101") in found["checkpoint"]
    assert (4, "MA102") in found["checkpoints"]  # the constant itself


def test_a_local_helper_reading_a_folder_the_script_writes_reads_an_output() -> None:
    report = check_source(
        textwrap.dedent(
            """
            import os
            import torch

            def newest(folder):
                return sorted(os.listdir(folder))[-1]

            def train(model):
                os.makedirs("runs/ckpt", exist_ok=True)
                start = newest("runs/ckpt")
                torch.save(model, "runs/ckpt/last.pt")
                other = newest("pretrained")
            """
        ),
        "train.py",
    )
    rules = {(f.line, f.rule) for f in report.findings}
    assert (10, "MA102") in rules and (10, "MA101") not in rules
    assert (12, "MA101") in rules  # a folder the script never writes stays an input


def test_a_folder_and_the_paths_built_under_it_move_together() -> None:
    after = _migrated(
        """
        import argparse
        import os
        import torch
        import helpers
        parser = argparse.ArgumentParser()
        args = parser.parse_known_args()[0]
        os.makedirs("checkpoints", exist_ok=True)
        helpers.keep("checkpoints/last.pth")
        """
    )
    # the folder is the channel's old root, the file stays under it
    assert 'default="./checkpoints"' in after
    assert "os.makedirs(args.train_url, exist_ok=True)" in after
    assert 'helpers.keep(os.path.join(args.train_url, "last.pth"))' in after


LOGGER = """
import argparse
import os

class CSVLogger:
    def __init__(self, folder, name="log.csv"):
        os.makedirs(folder, exist_ok=True)
        self.path = os.path.join(folder, name)

    def write(self, text):
        with open(self.path, "a") as f:
            f.write(text)

parser = argparse.ArgumentParser()
args, _ = parser.parse_known_args()
CSVLogger(folder="csv_logs").write("x")
"""


def test_a_file_name_default_placed_under_a_folder_parameter_is_no_path_of_its_own() -> None:
    """The folder the callers give is the path (reported and moved); the default file name lands
    under it. Reported, it had no fix and kept --train_url from being added at all."""
    left = _left(textwrap.dedent(LOGGER))
    assert [m for rule, m in left if rule == "MA102"] == [
        "'csv_logs' is CSVLogger()'s folder, used as a path"
    ]
    after = _migrated(LOGGER)
    assert 'CSVLogger(folder=os.path.join(args.train_url, "csv_logs"))' in after
    assert "--train_url" in after
    assert [rule for rule, _ in _left(after) if rule.startswith("MA10")] == ["MA103"]  # data_url


def test_a_folder_named_constant_joined_under_a_channel_is_no_local_path() -> None:
    source = textwrap.dedent(
        """
        import argparse, os, torch
        parser = argparse.ArgumentParser()
        parser.add_argument("--data_url")
        parser.add_argument("--train_url")
        args, _ = parser.parse_known_args()
        folder = os.path.join(args.train_url, "ckpt")
        data_dir = os.path.join(args.data_url, "images")
        torch.save({}, os.path.join(folder, "last.pt"))
        print(os.listdir(data_dir))
        """
    )
    assert _left(source) == []


def test_one_path_is_one_finding() -> None:
    # plt.savefig is both a method and an imported name that take a path; a formatted path's
    # head lies under a folder the script writes: each was reported twice at one place.
    report = check_source(
        textwrap.dedent(
            """
            import os
            import matplotlib.pyplot as plt
            from torchvision.utils import save_image

            def main(images, epochs):
                os.makedirs("results", exist_ok=True)
                for epoch in range(epochs):
                    save_image(images, "results/sample_" + str(epoch) + ".png")
                    plt.savefig("predict%d.pdf" % epoch)
            """
        ),
        "train.py",
    )
    places = [(f.rule, f.line, f.col) for f in report.findings]
    assert ("MA102", 9, 28) in places and ("MA102", 10, 21) in places
    assert len(places) == len(set(places)), places


def test_no_path_finding_is_reported_twice_in_the_corpora() -> None:
    corpora = [CORPUS_ROOT / "migrate_corpus", CORPUS_ROOT / "migrate_heldout"]
    for report in check_paths(corpora, Target.NPU, jobs=1):
        places = [(f.rule, f.line, f.col) for f in report.findings if f.rule in PATH_RULES]
        assert len(places) == len(set(places)), (report.path, places)


CORPUS_ROOT = Path(__file__).resolve().parents[2]
PATH_RULES = ("MA101", "MA102", "MA108")


def test_a_config_attribute_whose_name_says_nothing_is_a_path_when_its_uses_say_so() -> None:
    # minGPT's trainer: `self.config.snapshot_path = "snapshot.pt"`, saved with torch.save.
    report = check_source(
        textwrap.dedent(
            """
            import torch

            class Trainer:
                def __init__(self, config):
                    self.config = config
                    if self.config.snapshot_path is None:
                        self.config.snapshot_path = "snapshot.pt"
                    self.config.vocab = "vocab.json"
                    self.config.label = "model.v2"

                def save(self, state):
                    torch.save(state, self.config.snapshot_path)

                def words(self):
                    with open(self.config.vocab) as handle:
                        return handle.read().split()
            """
        ),
        "trainer.py",
    )
    found = {(f.line, f.rule): f.message for f in report.findings}
    assert "snapshot_path is set to 'snapshot.pt'" in found[(8, "MA102")]
    assert "vocab is set to 'vocab.json'" in found[(9, "MA101")]
    assert not [line for line, _ in found if line == 10]  # never used as a path: a name


def _run_with_train_url(migrated: str, work: Path, train: Path) -> None:
    """Run the migrated script as ``train.py`` in ``work``, its output channel ``train``."""
    (work / "train.py").write_text(migrated)
    done = subprocess.run(
        [sys.executable, "train.py", f"--train_url={train}"],
        cwd=work,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr + migrated


CONCATENATED = """
import argparse
import os
{constant}

def main(args, tag):
    {local}
    os.makedirs(os.path.dirname({path}) or ".", exist_ok=True)
    with open({path}, "w") as handle:
        handle.write("x")

parser = argparse.ArgumentParser()
args = parser.parse_args()
main(args, "7")
"""


@pytest.mark.parametrize(
    ("constant", "local", "path", "written"),
    [
        # T5's FSDP example: a name prefix, not a folder
        ("", 'prefix = "model-"', 'prefix + "-" + tag + ".txt"', "model--7.txt"),
        ("", 'root = "out/"', 'root + "model.txt"', "model.txt"),  # a folder with its slash
        ('ROOT = "out/"', "pass", 'ROOT + "model.txt"', "model.txt"),
        ("", 'root = "out"', 'root + "/model.txt"', "model.txt"),
        # a folder named from a prefix: the prefix moves, the folder stays inside
        ("", 'root = "run"', 'os.path.join(root + "_" + tag, "m.txt")', "run_7"),
        # FSDP2's example: a template constant; its fields stay under the channel
        (
            'CKPT_FOLDER = "ckpt/{tag}"',
            "folder = CKPT_FOLDER.format(tag=tag)",
            'folder + "/m.txt"',
            "7",
        ),
        # a template whose name says nothing, formatted into a local: .format, % and a tuple
        ('FOLDER = "out/run_{}"', "folder = FOLDER.format(tag)", 'folder + "/m.txt"', "run_7"),
        ('FOLDER = "out/run_%s"', "folder = FOLDER % tag", 'folder + "/m.txt"', "run_7"),
        ('NAME = "out/{}.txt"', "name = NAME.format(tag)", "name", "7.txt"),
        ('NAME = "out/%s-%s.txt"', "name = NAME % (tag, tag)", "name", "7-7.txt"),
    ],
)
def test_a_built_path_lands_inside_the_channel_after_the_rewrite(
    tmp_path: Path, constant: str, local: str, path: str, written: str
) -> None:
    source = CONCATENATED.format(constant=constant, local=local, path=path)
    migrated = migrate_source(source, Codemod.CLOUD_PATHS)[0]
    assert migrated != source
    work, train = tmp_path / "work", tmp_path / "train"
    work.mkdir()
    train.mkdir()
    _run_with_train_url(migrated, work, train)
    assert [p.name for p in train.iterdir()] == [written], migrated
    assert [p.name for p in work.iterdir()] == ["train.py"]  # nothing beside the channel


STRFTIME_RUNS = """
import argparse
import os
import time

RUNS = "runs/%Y%m%d-%H%M%S"

def main(args):
    folder = time.strftime(RUNS)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "log.txt"), "w") as handle:
        handle.write("x")

parser = argparse.ArgumentParser()
args = parser.parse_args()
main(args)
"""


def test_a_time_stamped_folder_keeps_its_stamp_under_the_channel(tmp_path: Path) -> None:
    # "runs/%Y%m%d-%H%M%S": the channel takes the place of "runs", strftime still fills the rest
    migrated = migrate_source(STRFTIME_RUNS, Codemod.CLOUD_PATHS)[0]
    assert '"%Y%m%d-%H%M%S"' in migrated, migrated
    train = tmp_path / "train"
    train.mkdir()
    _run_with_train_url(migrated, tmp_path, train)
    (stamped,) = train.iterdir()
    assert stamped.name[:8].isdigit() and (stamped / "log.txt").is_file()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["train", "train.py"]

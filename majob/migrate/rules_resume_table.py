"""The resume rules of ``majob check`` (MA4xx): what keeps a job that ModelArts restarts (issue 23:
``fault_tolerance`` in the spec) from carrying on where it stopped."""

from __future__ import annotations

from majob.migrate.rule_kinds import Codemod, Rule, Severity

_W = Severity.WARNING
_RESUME = (Codemod.RESUME,)

RESUME_RULES: tuple[Rule, ...] = (
    Rule(
        "MA401",
        "saves-without-resume",
        _W,
        "checkpoints are saved every epoch but never loaded: a job ModelArts restarts after a "
        "fault trains from scratch",
        "at start, load the latest checkpoint of the folder the loop saves to (model, optimizer, "
        "epoch) and start the epoch loop after it; keep that folder under the output the spec's "
        "fault_tolerance.checkpoints names (it is downloaded before a restarted job starts)",
        _RESUME,
    ),
    Rule(
        "MA402",
        "checkpoint-outside-folder",
        _W,
        "a checkpoint saved outside the spec's checkpoint folder: only that folder is downloaded "
        "into the container before a restarted job starts",
        "save under os.path.join(args.<output>, '<folder>') as fault_tolerance.checkpoints says, "
        "or point fault_tolerance.checkpoints at where the script saves",
    ),
    Rule(
        "MA403",
        "non-atomic-save",
        _W,
        "the checkpoint is written straight to its final name: a kill during the save leaves a "
        "cut file that the next start fails to load",
        "save to a temporary name, then os.replace(tmp, path): the rename is atomic",
        _RESUME,
    ),
)

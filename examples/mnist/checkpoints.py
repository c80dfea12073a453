"""Checkpoints that survive a killed job: written atomically, the newest good one loaded at start.

On ModelArts a restarted job (fault_tolerance in the spec) gets fresh containers; the files of
an output with "Predownload" set are downloaded into the new ones before the script starts. So
the script saves under that output (--train_url/ckpt/, as the spec's
``fault_tolerance.checkpoints: train_url/ckpt/`` says) and looks there first thing.

A save goes to a temporary name and is renamed into place (os.replace is atomic on one file
system): a job killed mid-save leaves a stray temporary file, never a half-written checkpoint
under a real name. A checkpoint that still does not load (a disk or copy that cut it short) is
skipped for the one before it, which is why the last KEEP are kept.

Plain Python: ``save(state, file)`` and ``load(path)`` are passed in (torch.save, torch.load).
"""

import os
import re

KEEP = 2
NAME = "epoch-{:04d}.pt"
SAVED = re.compile(r"^epoch-(\d+)\.pt$")
TEMP_MARK = ".partial-"


def saved_epochs(folder):
    """The epochs with a checkpoint in ``folder``, oldest first."""
    if not os.path.isdir(folder):
        return []
    found = (SAVED.match(name) for name in os.listdir(folder))
    return sorted(int(match.group(1)) for match in found if match)


def save_checkpoint(folder, epoch, state, save):
    """Save ``state`` as the checkpoint of ``epoch``; keep the newest KEEP."""
    os.makedirs(folder, exist_ok=True)
    final = os.path.join(folder, NAME.format(epoch))
    temporary = f"{final}{TEMP_MARK}{os.getpid()}"
    with open(temporary, "wb") as out:
        save(state, out)
        out.flush()
        os.fsync(out.fileno())  # on disk before the rename makes it the checkpoint
    os.replace(temporary, final)
    for old in saved_epochs(folder)[:-KEEP]:
        os.remove(os.path.join(folder, NAME.format(old)))


def load_latest(folder, load):
    """``(epoch, state)`` of the newest checkpoint that loads, or None (a fresh start).
    Stray temporary files of a save that was killed are removed."""
    if os.path.isdir(folder):
        for name in os.listdir(folder):
            if TEMP_MARK in name:
                os.remove(os.path.join(folder, name))
    for epoch in reversed(saved_epochs(folder)):
        path = os.path.join(folder, NAME.format(epoch))
        try:
            return epoch, load(path)
        except Exception as error:  # any reason a file does not load: try the one before
            print(f"checkpoint {NAME.format(epoch)} does not load ({error}); trying an older one")
    return None

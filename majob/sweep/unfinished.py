"""``majob sweep SPEC`` run again after its process died goes on with the sweep it left.

A sweep killed with its trials running (``kill -9``, a closed laptop, a lost SSH session) leaves
its study in the sweeps file: trials still ``RUNNING`` with their jobs, and trials not yet
asked. Starting a new sweep of the same spec would submit its trials again (and find their
names taken by the jobs still running). So a new sweep first looks for one that was started
with the same settings (spec file, stage, trial counts, profile, ``--set``) and the same spec
and code digests, that no process holds (``store.running``), that ``majob sweep stop`` did not
end, and that has trials left: that sweep is resumed instead, its submitted trials followed (or
judged if their jobs ended), never submitted twice (``run._Loop._adopt``).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING

from majob.sweep import store
from majob.sweep.control import STOPPED_ATTR

if TYPE_CHECKING:
    import optuna


def left_unfinished(
    storage: optuna.storages.BaseStorage, info: store.SweepInfo, path: Path
) -> optuna.Study | None:
    """The newest sweep like ``info`` (all but its id) that a dead process left with trials
    to go; None when there is none."""
    import optuna

    found: str | None = None
    for summary in optuna.get_all_study_summaries(storage, include_best_trial=False):
        attrs = summary.user_attrs
        if attrs.get(STOPPED_ATTR) or not info.spec_digest:
            continue
        try:
            theirs = store.SweepInfo.from_attrs(summary.study_name, attrs)
        except KeyError:  # not a study a sweep made
            continue
        if theirs != replace(info, id=summary.study_name):
            continue
        if _has_trials_left(storage, summary.study_name, info.trials) and not store.is_running(
            path, summary.study_name
        ):
            found = summary.study_name  # summaries come oldest first: the last one wins
    return store.load_study(storage, found) if found is not None else None


def _has_trials_left(storage: optuna.storages.BaseStorage, sweep_id: str, trials: int) -> bool:
    import optuna

    study_id = storage.get_study_id_from_name(sweep_id)
    asked = storage.get_all_trials(study_id, deepcopy=False)
    running = optuna.trial.TrialState.RUNNING
    return len(asked) < trials or any(trial.state == running for trial in asked)

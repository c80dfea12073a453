"""A sweep by its id, from another process: where it stands (``status``) and ending it
(``stop``: its running trials' jobs are stopped through the service and recorded as failed).
"""

from __future__ import annotations

import os
from pathlib import Path

from majob.errors import MajobError
from majob.pipeline.ledger import Ledger
from majob.sweep import store
from majob.sweep.results import SweepResult, importance_of, rows_of

STOPPED = "stopped by `majob sweep stop`"
STOPPED_ATTR = "stopped"  # the study attribute `stop` sets


def sweeps_file(ledger: str | os.PathLike[str] | None = None) -> Path:
    """The sweeps beside the ledger (``--ledger``, ``$MAJOB_LEDGER`` or this project's)."""
    return store.sweeps_path(Ledger(Path(ledger) if ledger else None).path)


def status(sweep_id: str, *, ledger: str | os.PathLike[str] | None = None) -> SweepResult:
    """Every trial of ``sweep_id`` as the study last recorded it."""
    with store.opened(sweeps_file(ledger)) as storage:
        study = store.load_study(storage, sweep_id)
        info = store.SweepInfo.from_study(study)
        return SweepResult(info, rows_of(study), importance_of(study))


def stop(
    sweep_id: str, *, ledger: str | os.PathLike[str] | None = None
) -> tuple[SweepResult, list[str]]:
    """Stop the jobs of ``sweep_id``'s running trials; the sweep after, and the jobs stopped."""
    import optuna

    from majob.service.connect import open_service
    from majob.spec.profiles import load_profile

    stopped: list[str] = []
    path = sweeps_file(ledger)
    with store.opened(path) as storage, store.running(path, sweep_id):
        study = store.load_study(storage, sweep_id)
        info = store.SweepInfo.from_study(study)
        # Ended on purpose: `majob sweep SPEC` run again starts a new sweep, not this one.
        study.set_user_attr(STOPPED_ATTR, True)
        running = study.get_trials(states=(optuna.trial.TrialState.RUNNING,))
        service = open_service(load_profile(info.profile)) if running else None
        try:
            for frozen in running:
                job_id = str(frozen.user_attrs.get("job_id", ""))
                phase = "not submitted"
                if job_id and service is not None:
                    try:
                        phase = service.terminate(job_id).phase
                    except MajobError as error:  # it ended meanwhile: record it all the same
                        phase = error.message.splitlines()[0]
                    stopped.append(job_id)
                trial_id = frozen._trial_id
                storage.set_trial_user_attr(trial_id, "reason", STOPPED)
                storage.set_trial_user_attr(trial_id, "phase", phase)
                study.tell(frozen.number, state=optuna.trial.TrialState.FAIL)
        finally:
            if service is not None:
                service.close()
        return SweepResult(info, rows_of(study)), stopped

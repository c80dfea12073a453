"""Where sweeps are kept: one Optuna study per sweep, in ``sweeps.journal`` beside the ledger.

Optuna's journal storage is used as it is, in a file of its own: an append-only log of every
ask, report and tell, written under a file lock (``majob sweep stop`` in another process is
safe), so a sweep survives the process that ran it. Not the ledger's SQLite file, nor Optuna's
SQLite storage beside it: that one costs ~0.25 s per trial operation and ~0.9 s to open here
(SQLAlchemy, a commit per step), a tenth of that in the journal, and the ledger's schema stays
majob's own. A study keeps
what the sweep was started with (``SweepInfo``, as study attributes) and, per trial, its
parameters, the job it ran as (``job_id``, ``job_name``) and why it ended (``reason``).

Optuna is imported here and in ``space``/``trial``, inside functions: ``majob --help`` never
pays for it.
"""

from __future__ import annotations

import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.errors import UserInputError

if TYPE_CHECKING:
    import optuna

SWEEPS_FILE = "sweeps.journal"


@dataclass(frozen=True)
class SweepInfo:
    """What a sweep was started with: enough for ``resume`` to go on without the command line."""

    id: str
    spec: str  # the spec file, absolute
    name: str  # the spec's name; trials are <name>-t<k>
    stage: str
    trials: int
    parallel: int
    profile: str | None
    goal: str  # min or max
    metric: str
    overrides: tuple[str, ...] = ()  # --set PATH=VALUE, applied again on resume
    # The template's digests (``pipeline/digests.py``) when it started: a sweep a killed run
    # left is gone on with by ``majob sweep SPEC`` only for the same code and spec ("": a sweep
    # of an older majob, never taken for another's).
    spec_digest: str = ""
    code_digest: str = ""

    @classmethod
    def from_study(cls, study: optuna.Study) -> SweepInfo:
        return cls.from_attrs(study.study_name, study.user_attrs)

    @classmethod
    def from_attrs(cls, sweep_id: str, attrs: dict[str, Any]) -> SweepInfo:
        optional = ("id", "overrides", "spec_digest", "code_digest")
        fields = {k: attrs[k] for k in cls.__dataclass_fields__ if k not in optional}
        overrides = tuple(str(o) for o in attrs.get("overrides", ()))
        return cls(
            id=sweep_id,
            overrides=overrides,
            spec_digest=str(attrs.get("spec_digest", "")),
            code_digest=str(attrs.get("code_digest", "")),
            **fields,
        )


def new_sweep_id(name: str) -> str:
    """``<name>-<6 hex>``: the spec's name says what was swept, the suffix tells sweeps apart."""
    return f"{name[:50]}-{secrets.token_hex(3)}"


def sweeps_path(ledger_path: Path) -> Path:
    return ledger_path.parent / SWEEPS_FILE


def quiet_optuna() -> None:
    """Optuna logs every trial at INFO on stderr; majob's table says it already."""
    import optuna

    optuna.logging.set_verbosity(optuna.logging.WARNING)


@contextmanager
def opened(path: Path) -> Iterator[optuna.storages.BaseStorage]:
    """The sweeps file at ``path`` (created on first use)."""
    from optuna.storages import JournalStorage
    from optuna.storages.journal import JournalFileBackend

    quiet_optuna()
    path.parent.mkdir(parents=True, exist_ok=True)
    yield JournalStorage(JournalFileBackend(str(path)))


def lock_file(path: Path, sweep_id: str) -> Path:
    return path.with_name(f"{path.name}.{sweep_id}.lock")


def is_running(path: Path, sweep_id: str) -> bool:
    """A process holds sweep ``sweep_id`` (``running``) now."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_file(path, sweep_id)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        return True
    lock.release()
    return False


@contextmanager
def running(path: Path, sweep_id: str) -> Iterator[None]:
    """Held while a process runs sweep ``sweep_id`` (released when it dies): a second
    ``resume`` of a sweep that is still running would follow and tell the same trials twice."""
    from filelock import FileLock, Timeout

    lock = FileLock(str(lock_file(path, sweep_id)))
    try:
        lock.acquire(timeout=0)
    except Timeout:
        raise UserInputError(
            f"sweep {sweep_id} is running in another process",
            hint="follow it there; Ctrl-C there leaves its trials running, then `majob sweep "
            f"resume {sweep_id}` or `majob sweep stop {sweep_id}` work here",
        ) from None
    try:
        yield
    finally:
        lock.release()


def create_study(
    storage: optuna.storages.BaseStorage,
    info: SweepInfo,
    *,
    seed: int | None,
    prune: str,
    **prune_args: int,
) -> optuna.Study:
    """A new study for ``info`` (its sampler and pruner are made again on each load)."""
    import optuna

    study = optuna.create_study(
        storage=storage,
        study_name=info.id,
        direction="minimize" if info.goal == "min" else "maximize",
    )
    for key, value in asdict(info).items():
        if key != "id":
            study.set_user_attr(key, list(value) if isinstance(value, tuple) else value)
    study.set_user_attr("seed", seed)
    study.set_user_attr("prune", prune)
    study.set_user_attr("prune_args", prune_args)
    return load_study(storage, info.id)


def load_study(storage: optuna.storages.BaseStorage, sweep_id: str) -> optuna.Study:
    """The study of ``sweep_id``, with the sampler (seeded) and pruner it was created with."""
    import optuna

    try:
        plain = optuna.load_study(study_name=sweep_id, storage=storage)
    except KeyError:
        known = sweep_ids(storage)
        raise UserInputError(
            f"no sweep {sweep_id!r} here",
            hint=f"sweeps here: {', '.join(known)}" if known else "start one: majob sweep SPEC",
        ) from None
    attrs = plain.user_attrs
    pruner: Any = optuna.pruners.NopPruner()
    if attrs.get("prune") == "median":
        args = attrs.get("prune_args") or {}
        pruner = optuna.pruners.MedianPruner(
            n_startup_trials=int(args.get("startup", 2)),
            n_warmup_steps=int(args.get("warmup", 1)),
        )
    seed = attrs.get("seed")
    # The seed moves on with the trials already asked, so a resumed sweep does not draw the
    # values its first run drew.
    sampler = optuna.samplers.TPESampler(
        seed=None if seed is None else int(seed) + len(plain.trials)
    )
    return optuna.load_study(study_name=sweep_id, storage=storage, sampler=sampler, pruner=pruner)


def sweep_ids(storage: optuna.storages.BaseStorage) -> list[str]:
    import optuna

    return [s.study_name for s in optuna.get_all_study_summaries(storage, False)]

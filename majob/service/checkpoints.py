"""A submit's claim on its stage's checkpoint folder: checked by the pre-flight, taken before the
job is created.

The folder (``fault_tolerance.checkpoints``, inside the stage's own output folder) is downloaded
into the container before the job starts, so whatever it holds is what the script resumes from.
The pre-flight refuses a folder that holds objects another stage or another spec digest wrote,
or that no owner record accounts for (``service/ckpt_owner.py``), unless the user says where to
resume from: ``--resume-from SOURCE`` (a stage, ``debug`` or ``formal``, or an ``obs://``
folder). The same stage and spec digest (a re-submit after a failure, the code fixed) resumes
without asking: that is what the folder is for.

``--resume-from`` another folder copies its objects into the stage's (inside OBS, all or
nothing: ``storage/copy.py``) before the job is created; the stage's folder must be empty for
that (or hold that very copy already, from a submit that failed after it), so nothing is mixed.
``--resume-from`` the stage's own folder accepts what it holds.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from majob.compile.fault_tolerance import checkpoint_uri
from majob.errors import StorageNotFound, UserInputError
from majob.service.ckpt_owner import Owner, read_owner, write_owner
from majob.spec.models import JobSpec, Stage
from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.copy import copy_folder, folder_objects
from majob.storage.uri import ObsUri
from majob.text import counted, human_bytes

WHERE = "fault_tolerance.checkpoints"
RESUME_CHOICES = "debug, formal or an obs://bucket/folder/"


@dataclass(frozen=True)
class ResumeSource:
    """Where ``--resume-from`` takes the checkpoints from: ``text`` as written, its folder."""

    text: str
    folder: ObsUri


def resume_source(spec: JobSpec, stage: Stage, text: str) -> ResumeSource:
    """``--resume-from TEXT`` for ``spec`` (the spec, not a stage's) submitted as ``stage``: a
    cloud stage's checkpoint folder, or an ``obs://`` folder; a ``UserInputError`` otherwise."""
    if spec.fault_tolerance.checkpoints is None:
        raise UserInputError(
            f"--resume-from {text}: the spec has no checkpoint folder to resume from",
            hint="add fault_tolerance.checkpoints (e.g. train_url/ckpt/, under an output)",
        )
    if text == "local":
        raise UserInputError(
            "--resume-from local: the local stage's checkpoints are on this machine",
            hint="upload them (majob obs cp -r DIR obs://bucket/folder/) and resume from there",
        )
    if text in ("debug", "formal"):
        folder = checkpoint_uri(spec.at_stage(text))  # type: ignore[arg-type]
        assert folder is not None  # the spec has checkpoints
        return ResumeSource(text, folder)
    if not text.startswith(("obs://", "/")):
        raise UserInputError(f"--resume-from {text!r}: choose {RESUME_CHOICES}")
    return ResumeSource(text, ObsUri.parse(text).as_dir())


@dataclass(frozen=True)
class CheckpointClaim:
    """What one submit asks of its stage's checkpoint folder."""

    folder: ObsUri
    stage: Stage
    spec: str
    spec_digest: str
    resume: ResumeSource | None = None

    @classmethod
    def of(
        cls, spec: JobSpec, stage: Stage, digest: str, resume: ResumeSource | None = None
    ) -> CheckpointClaim | None:
        """The claim of ``spec`` (the stage's spec) on its checkpoint folder; None without."""
        folder = checkpoint_uri(spec)
        return cls(folder, stage, spec.name, digest, resume) if folder is not None else None

    @property
    def copies(self) -> bool:
        """The checkpoints come from another folder."""
        return self.resume is not None and self.resume.folder != self.folder

    def owner(self, job_name: str, submit_id: str = "") -> Owner:
        resumed = self.resume.folder.uri if self.copies and self.resume else ""
        return Owner(
            self.folder.uri,
            self.stage,
            self.spec,
            self.spec_digest,
            job_name,
            submit_id=submit_id,
            resumed_from=resumed,
        )


def _listed(store: ObjectStore, folder: ObsUri) -> list[ObjectInfo]:
    """The folder's objects; none when its bucket does not exist yet (the pre-flight's bucket
    check says so, or the submit makes it)."""
    try:
        return folder_objects(store, folder)
    except StorageNotFound:
        return []


def _contents(objects: list[ObjectInfo], folder: ObsUri) -> set[tuple[str, int]]:
    return {(info.key[len(folder.key) :], info.size) for info in objects}


def claim_problem(claim: CheckpointClaim, store: ObjectStore) -> str | None:
    """The pre-flight's line when ``claim`` cannot be had as it is; None when it can."""
    folder, held = claim.folder, _listed(store, claim.folder)
    empty_it = f"empty the folder first (majob obs rm -r {folder})"
    if claim.copies:
        assert claim.resume is not None
        source = claim.resume
        if source.folder.bucket == folder.bucket and (
            source.folder.key.startswith(folder.key) or folder.key.startswith(source.folder.key)
        ):
            return (
                f"{WHERE}: --resume-from {source.text}: {source.folder} and this stage's folder "
                f"{folder} hold one another; name a folder beside it"
            )
        offered = _listed(store, source.folder)
        if not offered:
            return (
                f"{WHERE}: --resume-from {source.text}: {source.folder} holds no checkpoints; "
                + ("run that stage first, or " if source.text in ("debug", "formal") else "")
                + "name a folder that holds them"
            )
        if not held:
            return None
        owner = read_owner(store, folder)
        if (
            owner is not None
            and owner.state == "owned"
            and owner.resumed_from == source.folder.uri
            and (owner.stage, owner.spec_digest) == (claim.stage, claim.spec_digest)
            and _contents(held, folder) == _contents(offered, source.folder)
        ):
            return None  # the copy a submit that failed after it made: taken as it is
        return (
            f"{WHERE}: --resume-from {source.text} copies into {folder}, which already holds "
            f"{counted(len(held), 'object')} ({_written_by(owner)}); {empty_it}, or resume from "
            f"what it holds with --resume-from {claim.stage}"
        )
    if not held or claim.resume is not None:  # nothing there, or its contents accepted
        return None
    owner = read_owner(store, folder)
    if (
        owner is not None
        and owner.state == "owned"
        and (owner.stage, owner.spec_digest) == (claim.stage, claim.spec_digest)
    ):
        return None  # this stage and spec wrote them: the job resumes from them
    return (
        f"{WHERE}: {folder} holds {counted(len(held), 'object')} {_written_by(owner, claim)}, "
        f"and the {claim.stage} job would download them and could resume from them; to resume "
        f"from them on purpose pass --resume-from {claim.stage}, else {empty_it}"
    )


def _written_by(owner: Owner | None, claim: CheckpointClaim | None = None) -> str:
    if owner is None:
        return "that majob has no record of writing (another tool, by hand, or an older majob)"
    if owner.state == "copying":
        return f"from a copy of {owner.resumed_from} that did not finish ({owner.written})"
    said = f"written by {owner.said()}"
    if claim is not None and owner.stage == claim.stage:
        said += f", for another spec: this one is {claim.spec_digest[:8]}"
    return said


def take_claim(
    claim: CheckpointClaim,
    store: ObjectStore,
    owner: Owner,
    report: Callable[[str], None],
    completed: Callable[[str], bool] = lambda job_id: False,
) -> Owner:
    """Copy the checkpoints ``--resume-from`` names (when they are not there yet) and record
    ``owner`` as the folder's; the owner recorded. The pre-flight allowed ``claim``.
    ``completed(job_id)``: whether that job completed (see ``_finished_run``)."""
    folder = claim.folder
    held = _listed(store, folder)
    if held and claim.resume is None and _finished_run(store, folder, held, completed, report):
        held = []
    if claim.copies and not held:
        assert claim.resume is not None
        source = claim.resume.folder
        # Said before the first byte moves: a copy killed part-way is not taken for a whole one.
        write_owner(store, replace(owner, state="copying"))
        done = copy_folder(store, source, folder)
        report(
            f"checkpoints: resumed from {claim.resume.text}: copied "
            f"{counted(len(done.keys), 'object')} ({human_bytes(done.size)}) from {source} "
            f"to {folder}"
        )
    elif held:
        how = f"--resume-from {claim.resume.text}" if claim.resume else "this stage and spec"
        report(
            f"checkpoints: {folder} holds {counted(len(held), 'object')} ({how}): "
            "the job resumes from them"
        )
    write_owner(store, owner)
    return owner


def _finished_run(
    store: ObjectStore,
    folder: ObsUri,
    held: list[ObjectInfo],
    completed: Callable[[str], bool],
    report: Callable[[str], None],
) -> bool:
    """Removes the checkpoints of a job of this stage and spec that *completed*; whether it did.
    Resuming from them would train nothing (the run they come from is over: a script resumes
    past its last epoch and reports no loss), so a new job of the stage starts afresh, as its
    outputs, which it overwrites in the same folder, do. A job that failed or was stopped left
    checkpoints to resume from: they stay. ``--resume-from`` keeps them on purpose."""
    owner = read_owner(store, folder)
    if owner is None or not owner.job_id or not completed(owner.job_id):
        return False
    store.delete_many(folder.bucket, [info.key for info in held])
    report(
        f"checkpoints: {folder} held {counted(len(held), 'object')} of job {owner.job_name} "
        f"({owner.job_id}), which completed: removed, this job starts afresh (to continue "
        f"from a finished run's checkpoints, pass --resume-from {owner.stage})"
    )
    return True

"""A submit: compile, check everything, upload, create the job exactly once.

::

    spec ─compile─▶ body + submit id ─pre-flight─▶ inputs (--upload-inputs) ─▶ code sync ─▶ create

This is the one way a job is submitted: ``majob submit``, ``majob.submit`` and the pipeline's
cloud stages all call ``submit_plan``. The code is scanned once, in ``plan_submit`` (or by the
caller, who passes the scan in): the same files make the submit id and are what is uploaded.
How the create stays single when connections fail is ``service/create.py``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.errors import CompileError, MajobError, PreflightError, ServiceError, UserInputError
from majob.service.base import CREATE_LANDING_WINDOW, Job, TrainingService
from majob.service.code import code_digest, file_digests, scan_code
from majob.service.create import NAME_TAKEN, create_once, submit_id, tagged
from majob.spec.models import JobSpec, Stage
from majob.text import counted

if TYPE_CHECKING:
    from majob.service.checkpoints import CheckpointClaim, ResumeSource
    from majob.service.ckpt_owner import Owner
    from majob.spec.profiles import Profile
    from majob.storage.base import ObjectStore
    from majob.storage.plan import LocalFile, SyncPlan

CLOUD_STAGES = ("debug", "formal")


def cloud_stage(stage: str) -> Stage:
    """``stage`` if it runs on ModelArts; a ``UserInputError`` otherwise."""
    if stage == "local":
        raise UserInputError(
            "the local stage runs on this machine, not on ModelArts",
            hint="run it with `majob run SPEC`; submit --stage debug or formal",
        )
    if stage not in CLOUD_STAGES:
        raise UserInputError(f"--stage {stage!r}: choose debug or formal")
    return stage  # type: ignore[return-value]


@dataclass(frozen=True)
class SubmitPlan:
    """What a submit will send: the tagged body, the code files, the inputs to upload."""

    spec: JobSpec  # the stage's effective spec
    stage: Stage
    body: dict[str, Any]
    submit_id: str
    code_files: tuple[LocalFile, ...]
    problems: tuple[str, ...] = ()  # found while planning; pre-flight reports them too
    spec_digest: str = ""  # of the spec without its stage overrides (spec/digest.py)
    resume: ResumeSource | None = None  # --resume-from

    @property
    def claim(self) -> CheckpointClaim | None:
        """What this submit asks of its checkpoint folder (``service/checkpoints.py``)."""
        from majob.service.checkpoints import CheckpointClaim

        return CheckpointClaim.of(self.spec, self.stage, self.spec_digest, self.resume)

    @property
    def job_name(self) -> str:
        return str(self.body.get("metadata", {}).get("name", self.spec.name))

    def renamed(self, name: str) -> SubmitPlan:
        """The same submit (its id too: a lost create is still found) under job name ``name``."""
        body = {**self.body, "metadata": {**self.body.get("metadata", {}), "name": name}}
        return replace(self, body=body)

    def shown_body(self) -> dict[str, Any]:
        """The body as a dry run prints it: the values the spec took from the environment
        shown as ``***`` (``majob compile`` shows the same)."""
        shown: dict[str, Any] = self.spec.from_environ.masker().data(self.body)
        return shown

    def input_uploads(self) -> list[tuple[str, Path, str]]:
        """(input name, local stand-in, OBS uri) of every input that has a stand-in."""
        return [(c.name, Path(c.local), c.obs.uri) for c in self.spec.inputs if c.local is not None]


def plan_submit(
    spec: JobSpec,
    stage: Stage,
    *,
    files: Sequence[LocalFile] | None = None,
    cache_dir: Path | None = None,
    resume_from: str | None = None,
    digest: str | None = None,
) -> SubmitPlan:
    """Compile ``spec`` for ``stage`` and digest its code (``files``: its scan, when the caller
    made it; read-only, local); what is wrong here (the spec does not compile, the boot file is
    not in the upload) is in ``problems``. ``resume_from``: ``--resume-from`` (a stage or an
    ``obs://`` folder; a ``UserInputError`` when it is neither); ``digest``: the spec digest
    the checkpoint folder's owner is recorded with (``cloud_spec_digest``), when not ``spec``'s
    own (a dump run is the stage of the user's spec)."""
    from majob.compile.rest import to_rest_body
    from majob.service.checkpoints import resume_source
    from majob.service.preflight import Findings, check_boot_file
    from majob.spec.digest import cloud_spec_digest

    resume = resume_source(spec, stage, resume_from) if resume_from is not None else None
    problems: list[str] = []
    try:
        body = to_rest_body(spec, stage)
    except CompileError as error:
        problems.append(f"spec: {error.message}" + (f"; {error.hint}" if error.hint else ""))
        body = {"kind": "job", "metadata": {"name": spec.name}}
    files = tuple(files) if files is not None else scan_code(spec, cache_dir=cache_dir)
    boot = Findings(problems)
    check_boot_file(spec, [f.rel for f in files], boot)
    sid = submit_id(body, code_digest(file_digests(files)), stage)
    effective = spec.at_stage(stage)
    return SubmitPlan(
        effective,
        stage,
        tagged(body, sid),
        sid,
        files,
        tuple(boot.problems),
        digest or cloud_spec_digest(spec),
        resume,
    )


@dataclass
class Submitter:
    """One submit's clients and where it reports progress."""

    service: TrainingService
    store: ObjectStore
    profile: Profile
    report: Callable[[str], None] = lambda line: None
    cache_dir: Path | None = None

    def preflight(
        self, plan: SubmitPlan, *, upload_inputs: bool, named: Sequence[Job] | None = None
    ) -> list[str]:
        from majob.service.offerings import cache_file, load_offerings
        from majob.service.preflight import run_preflight

        # The REST backend says where it is (its ServiceConfig); the cache is keyed by that.
        config = getattr(self.service, "config", None)
        cache = (
            cache_file(str(config.endpoint), str(config.project_id), self.cache_dir)
            if config is not None
            else None
        )
        return run_preflight(
            plan.spec,
            job_name=plan.job_name,
            uploaded=[f.rel for f in plan.code_files],
            service=self.service,
            store=self.store,
            offerings=lambda: load_offerings(self.service, cache),
            upload_inputs=upload_inputs,
            earlier=plan.problems,
            profile_flag=""
            if self.profile.name == "default"
            else f" --profile {self.profile.name}",
            make_buckets=self.makes_buckets(upload_inputs),
            named=named,
            claim=plan.claim,
            warn=lambda line: self.report(f"warning: {line}"),
        )

    def makes_buckets(self, upload_inputs: bool) -> bool:
        """On the emulator, ``--upload-inputs`` makes the buckets the spec names: a spec from
        ``majob init`` runs there as it is. A real account's buckets are the user's to make."""
        return upload_inputs and self.profile.emulated

    def make_buckets(self, plan: SubmitPlan) -> None:
        spec = plan.spec
        named = [c.obs.bucket for c in (*spec.inputs, *spec.outputs)]
        named += [uri.bucket for uri in (spec.log, spec.code.obs) if uri is not None]
        for bucket in dict.fromkeys(named):
            if self.store.create_bucket(bucket):
                self.report(f"made bucket obs://{bucket} on the emulator")

    def upload_inputs(self, plan: SubmitPlan) -> None:
        from majob.storage.sync import sync_dir
        from majob.storage.uri import ObsUri

        for name, local, uri in plan.input_uploads():
            target = ObsUri.parse(uri)
            if local.is_dir():
                _, result = sync_dir(self.store, local, target.as_dir(), cache_dir=self.cache_dir)
                sent = result.uploaded if result is not None else 0
                self.report(
                    f"input {name}: {local} -> {target.as_dir()} ({counted(sent, 'file')} sent)"
                )
            else:
                key = target.key if not target.is_dir else target.key + local.name
                self.store.put_file(target.bucket, key, local)
                self.report(f"input {name}: {local} -> obs://{target.bucket}/{key}")

    def sync_code(self, plan: SubmitPlan) -> SyncPlan:
        from majob.service.code import sync_code

        sync_plan, _ = sync_code(
            plan.spec, self.store, files=plan.code_files, cache_dir=self.cache_dir
        )
        return sync_plan

    def _create_wait(self) -> float:
        # The REST backend carries MAJOB_MODELARTS_CREATE_WAIT in its ServiceConfig, the
        # notebook backend as its own attribute.
        wait = getattr(self.service, "create_wait", None)
        if wait is None:
            wait = getattr(getattr(self.service, "config", None), "create_wait", None)
        return float(wait) if isinstance(wait, (int, float)) else CREATE_LANDING_WINDOW

    def with_free_name(self, plan: SubmitPlan) -> tuple[SubmitPlan, list[Job] | None]:
        """``plan``, renamed ``<name>-N`` when only ended jobs hold its name
        (``service/jobnames.py``), and the jobs the search found (the pre-flight's name check
        reads them); as it is, and None, when the service cannot be asked (the pre-flight asks
        again and reports why). An active holder is the pre-flight's to report."""
        from majob.service.jobnames import free_name, jobs_named_like, search_stem

        name = plan.job_name
        try:
            seen = list(jobs_named_like(self.service, search_stem(name)))
        except ServiceError:
            return plan, None
        chosen = free_name(name, seen)
        if chosen is None or chosen == name:
            return plan, seen
        self.report(f"note: job name {name!r} is held by an ended job; this job is {chosen!r}")
        return plan.renamed(chosen), seen

    def submit(self, plan: SubmitPlan, *, upload_inputs: bool = False) -> Job:
        from majob.service.checkpoints import take_claim

        plan, seen = self.with_free_name(plan)
        problems = self.preflight(plan, upload_inputs=upload_inputs, named=seen)
        if problems:
            raise PreflightError(problems)
        if self.makes_buckets(upload_inputs):
            self.make_buckets(plan)
        claim = plan.claim
        owner = claim.owner(plan.job_name, plan.submit_id) if claim is not None else None
        if claim is not None and owner is not None:  # before any upload: a copy may fail
            take_claim(claim, self.store, owner, self.report, completed=self._completed)
        if upload_inputs:
            self.upload_inputs(plan)
        sync_plan = self.sync_code(plan)
        self.report(
            f"code: {len(sync_plan.uploads)} of {counted(len(plan.code_files), 'file')} sent to "
            f"{plan.spec.code.obs}"
        )
        # A backend that cannot carry all of the body (the notebook SDK's) says what it drops.
        unsaid = getattr(self.service, "unsaid", None)
        for note in unsaid(plan.body) if unsaid is not None else ():
            self.report(f"note: {note}")
        try:
            job = create_once(
                self.service, plan.body, landing_window=self._create_wait(), report=self.report
            )
        except ServiceError as error:
            raise _explained(error, plan) from None
        if owner is not None:
            self._record_job(owner, job)
        return job

    def _completed(self, job_id: str) -> bool:
        """Whether the job ``job_id`` completed; not when it is gone or cannot be read (then
        its checkpoints are resumed from, as those of a job that did not finish)."""
        try:
            return self.service.get(job_id).succeeded
        except MajobError:
            return False

    def _record_job(self, owner: Owner, job: Job) -> None:
        """The checkpoint folder's owner gains the job's id (it was recorded before the create,
        with the submit id, so a lost answer still leaves the folder accounted for)."""
        from majob.service.ckpt_owner import write_owner

        try:
            write_owner(self.store, owner.with_job(job.name, job.id))
        except MajobError as error:
            self.report(f"note: the checkpoint folder's owner record keeps no job id: {error}")


def _explained(error: ServiceError, plan: SubmitPlan) -> MajobError:
    """The create's refusal, with the job named when the name was the trouble."""
    if error.code == NAME_TAKEN:
        return ServiceError(
            f"job name {plan.job_name!r} is taken ({error.detail})",
            code=error.code,
            remedy=error.remedy,
            request_id=error.request_id,
            status=error.status,
            hint=(
                f"see `majob list --name {plan.job_name}`; a name stays taken until its job is "
                "deleted (majob delete JOB), or --set name=..."
            ),
        )
    return error


def submit_plan(
    plan: SubmitPlan,
    profile: Profile,
    *,
    service: Callable[[], TrainingService] | None = None,
    upload_inputs: bool = False,
    report: Callable[[str], None] = lambda line: None,
) -> Job:
    """Check, upload and create ``plan``'s job on ``profile``'s ModelArts and OBS. OBS is opened
    first, so a submit with nothing configured names the missing keys. The job stays bound to
    the client ``service`` gives (one opened here when not given, closed only if the submit
    fails), so ``job.wait()`` and ``job.logs()`` work on it."""
    from majob.service.connect import open_service, open_store

    store = open_store(profile)
    try:
        client = service() if service is not None else open_service(profile)
        try:
            submitter = Submitter(client, store, profile, report=report)
            return submitter.submit(plan, upload_inputs=upload_inputs)
        except BaseException:
            if service is None:
                client.close()
            raise
    finally:
        store.close()

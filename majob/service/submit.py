"""``majob submit``: compile, check everything, upload, create the job exactly once.

::

    spec ─compile─▶ body + submit id ─pre-flight─▶ inputs (--upload-inputs) ─▶ code sync ─▶ create

Idempotent create: the body carries ``metadata.annotations["majob/submit-id"]``, a digest of
the body, the code's content and the stage. When a create fails in a way that leaves its fate
unknown (a time-out, a dropped connection, a 5xx), majob does not send it again blindly: the
first create may still be running in the service, so it searches for a job with that submit id
until the first create can no longer land, and only sends the create again when none did. A
create the service turned away (429, 503) is sent again after one search. One ``majob submit``
makes at most one job.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from majob.errors import CompileError, MajobError, PreflightError, ServiceError, ServiceUnreachable
from majob.service.base import (
    CREATE_LANDING_WINDOW,
    SUBMIT_ID_ANNOTATION,
    Job,
    JobFilter,
    TrainingService,
)
from majob.spec.models import JobSpec, Stage
from majob.text import counted

if TYPE_CHECKING:
    from majob.spec.profiles import Profile
    from majob.storage.base import ObjectStore
    from majob.storage.plan import LocalFile, SyncPlan

RETRYABLE_STATUS = frozenset({429, 500, 502, 503, 504})
CREATE_BUDGET = 120.0  # seconds a submit keeps trying to create its one job
CLOCK_SLACK_MS = 120_000  # the service's clock may run behind ours
TURNED_AWAY_STATUS = frozenset({429, 503})
LANDING_POLL = 2.0  # seconds between searches while a create may still land


def is_ambiguous(error: BaseException) -> bool:
    """A create that failed this way may have made the job anyway, or may succeed if sent
    again: the connection failed, the service had a 5xx moment, or it throttled (429)."""
    if isinstance(error, ServiceUnreachable):
        return True
    return isinstance(error, ServiceError) and (error.status or 0) in RETRYABLE_STATUS


def code_digest(files: list[LocalFile]) -> str:
    """A digest of the code as uploaded: each file's path and content digest."""
    digest = hashlib.sha256()
    for file in sorted(files, key=lambda f: f.rel):
        content = file.md5 or f"size={file.size};mtime={file.mtime_ns}"
        digest.update(f"{file.rel}\0{content}\n".encode())
    return digest.hexdigest()


def submit_id(body: Mapping[str, Any], code: str, stage: Stage) -> str:
    """The submit id: spec (its compiled body), code and stage, digested together."""
    spec_digest = hashlib.sha256(
        json.dumps(body, sort_keys=True, ensure_ascii=False).encode()
    ).hexdigest()
    whole = hashlib.sha256(f"{spec_digest}\n{code}\n{stage}".encode()).hexdigest()
    return whole[:32]


def tagged(body: Mapping[str, Any], submit_id: str) -> dict[str, Any]:
    """``body`` with the submit id among its annotations."""
    out = copy.deepcopy(dict(body))
    metadata = out.setdefault("metadata", {})
    annotations = dict(metadata.get("annotations") or {})
    annotations[SUBMIT_ID_ANNOTATION] = submit_id
    metadata["annotations"] = annotations
    return out


def find_submitted(
    service: TrainingService, name: str, submit_id: str, since_ms: int
) -> Job | None:
    """The job this submit created, if the service has it."""
    jobs, _ = service.search(JobFilter(name=name, created_after=since_ms - CLOCK_SLACK_MS))
    return next((j for j in jobs if j.name == name and j.submit_id == submit_id), None)


def create_once(
    service: TrainingService,
    body: Mapping[str, Any],
    *,
    budget: float = CREATE_BUDGET,
    landing_window: float = CREATE_LANDING_WINDOW,
    report: Callable[[str], None] | None = None,
    sleep: Callable[[float], None] = time.sleep,
) -> Job:
    """Create the job ``body`` describes (it must carry a submit id) exactly once.

    A create the service turned away (429, 503) made no job: after one search confirms it, it
    is sent again. A create whose answer was lost (a time-out, a dropped connection, another
    5xx) may still be running in the service and land later: it is looked for by its submit id
    until ``landing_window`` seconds after it was sent, and only sent again when none landed.
    """
    annotations = (body.get("metadata") or {}).get("annotations") or {}
    sid = annotations.get(SUBMIT_ID_ANNOTATION)
    if not sid:
        raise ValueError("create_once needs a body tagged with a submit id")
    name = str(body["metadata"]["name"])
    started_ms = int(time.time() * 1000)
    deadline = time.monotonic() + budget
    say = report or (lambda line: None)
    delay = 0.2
    attempt = 0
    while True:
        attempt += 1
        sent = time.monotonic()
        try:
            return service.create(body)
        except ServiceError as error:
            duplicate = error.code == "ModelArts.2751" and attempt > 1
            if not (is_ambiguous(error) or duplicate):
                raise
            failure = error
        # An earlier create of ours may hold the name, or this one's answer was lost.
        in_flight = not (duplicate or turned_away(failure))
        look_until = min(sent + landing_window, deadline) if in_flight else time.monotonic()
        if in_flight:
            # Whatever happens next, this create may still make its job.
            failure.hint = (
                f"the job may still appear: see `majob list --name {name}` before submitting again"
            )
            left = max(0.0, look_until - time.monotonic())
            say(
                f"create got no answer ({failure.message}); it may still land: looking for job "
                f"{name!r} by its submit id for up to {left:.0f}s before sending it again"
            )
        found = _look_for(service, name, sid, started_ms, look_until, deadline, failure, sleep)
        if found is not None:
            if in_flight:
                say(f"the create landed: job {found.id}")
            return found
        if failure.code == "ModelArts.2751":
            raise failure  # the name is taken, and not by our job
        if time.monotonic() + delay > deadline:
            raise failure
        if in_flight:
            say(f"no job with this submit id appeared in {landing_window:.0f}s; sending it again")
        else:
            say(f"create turned away ({failure.message}); no job was made; trying again")
        sleep(delay)
        delay = min(delay * 2, 5.0)


def turned_away(error: ServiceError) -> bool:
    """The service answered that it did not take the request (throttled, or unavailable)."""
    return not isinstance(error, ServiceUnreachable) and (error.status or 0) in TURNED_AWAY_STATUS


def _look_for(
    service: TrainingService,
    name: str,
    sid: str,
    started_ms: int,
    until: float,
    deadline: float,
    failure: ServiceError,
    sleep: Callable[[float], None],
) -> Job | None:
    """Search for the job until it is found or ``until`` passed with at least one answer; a
    search that keeps failing until ``deadline`` raises ``failure`` (its fate stays unknown)."""
    answered = False
    delay = 0.2
    while True:
        try:
            found = find_submitted(service, name, sid, started_ms)
        except ServiceError as error:
            if not is_ambiguous(error) or time.monotonic() + delay > deadline:
                raise failure from None
        else:
            if found is not None:
                return found
            answered = True
        if answered and time.monotonic() >= until:
            return None
        sleep(delay)
        delay = min(delay * 2, LANDING_POLL)


# -- the whole submit ------------------------------------------------------------------------


@dataclass(frozen=True)
class SubmitPlan:
    """What a submit will send: the tagged body, the code files, the inputs to upload."""

    spec: JobSpec  # the stage's effective spec
    stage: Stage
    body: dict[str, Any]
    submit_id: str
    code_files: tuple[LocalFile, ...]
    problems: tuple[str, ...] = ()  # found while planning; pre-flight reports them too

    @property
    def job_name(self) -> str:
        return str(self.body.get("metadata", {}).get("name", self.spec.name))

    def shown_body(self) -> dict[str, Any]:
        """The body as a dry run prints it: the values the spec took from the environment
        shown as ``***`` (``majob compile`` shows the same)."""
        shown: dict[str, Any] = self.spec.from_environ.masker().data(self.body)
        return shown

    def input_uploads(self) -> list[tuple[str, Path, str]]:
        """(input name, local stand-in, OBS uri) of every input that has a stand-in."""
        return [(c.name, Path(c.local), c.obs.uri) for c in self.spec.inputs if c.local is not None]


def plan_submit(spec: JobSpec, stage: Stage, *, cache_dir: Path | None = None) -> SubmitPlan:
    """Compile ``spec`` for ``stage`` and digest its code (read-only, local); what is wrong
    here (the spec does not compile, the boot file is not in the upload) is in ``problems``."""
    from majob.compile.rest import to_rest_body
    from majob.service.preflight import Findings, check_boot_file
    from majob.storage.localstate import HashCache
    from majob.storage.plan import scan_local

    problems: list[str] = []
    try:
        body = to_rest_body(spec, stage)
    except CompileError as error:
        problems.append(f"spec: {error.message}" + (f"; {error.hint}" if error.hint else ""))
        body = {"kind": "job", "metadata": {"name": spec.name}}
    root = Path(spec.code.dir).resolve()
    cache = HashCache.for_root(root, cache_dir)
    files = tuple(scan_local(root, spec.code.ignore, cache))
    cache.save()
    boot = Findings(problems)
    check_boot_file(spec, [f.rel for f in files], boot)
    sid = submit_id(body, code_digest(list(files)), stage)
    return SubmitPlan(
        spec.at_stage(stage), stage, tagged(body, sid), sid, files, tuple(boot.problems)
    )


@dataclass
class Submitter:
    """One submit's clients and where it reports progress."""

    service: TrainingService
    store: ObjectStore
    profile: Profile
    report: Callable[[str], None] = lambda line: None
    cache_dir: Path | None = None

    def preflight(self, plan: SubmitPlan, *, upload_inputs: bool) -> list[str]:
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
        )

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
        from majob.storage.sync import sync_code

        sync_plan, _ = sync_code(plan.spec, self.store, cache_dir=self.cache_dir)
        return sync_plan

    def _create_wait(self) -> float:
        # The REST backend carries MAJOB_MODELARTS_CREATE_WAIT in its ServiceConfig.
        wait = getattr(getattr(self.service, "config", None), "create_wait", None)
        return float(wait) if isinstance(wait, (int, float)) else CREATE_LANDING_WINDOW

    def submit(self, plan: SubmitPlan, *, upload_inputs: bool = False) -> Job:
        problems = self.preflight(plan, upload_inputs=upload_inputs)
        if problems:
            raise PreflightError(problems)
        if upload_inputs:
            self.upload_inputs(plan)
        sync_plan = self.sync_code(plan)
        self.report(
            f"code: {len(sync_plan.uploads)} of {counted(len(plan.code_files), 'file')} sent to "
            f"{plan.spec.code.obs}"
        )
        try:
            return create_once(
                self.service, plan.body, landing_window=self._create_wait(), report=self.report
            )
        except ServiceError as error:
            raise _explained(error, plan) from None


def _explained(error: ServiceError, plan: SubmitPlan) -> MajobError:
    """The create's refusal, with the job named when the name was the trouble."""
    if error.code == "ModelArts.2751":
        return ServiceError(
            f"job name {plan.job_name!r} is taken ({error.detail})",
            code=error.code,
            remedy=error.remedy,
            request_id=error.request_id,
            status=error.status,
            hint=f"see `majob list --name {plan.job_name}`; stop that job or --set name=...",
        )
    return error

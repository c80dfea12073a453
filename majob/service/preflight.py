"""Every check ``majob submit`` runs before anything is uploaded or created.

Each check reports problems as lines (``where: what; what to do``) and never stops the others:
the user sees every problem at once and fixes them in one go. A check that cannot run (OBS or
ModelArts unreachable) is itself a problem line. Keys that OBS or ModelArts refuse end the
checks with one line (a ``ConfigError``): every other check would be refused the same way.
``run_preflight`` writes nothing but a zero-byte probe object per bucket (deleted at once) to
prove the bucket is writable.

The checks (issue 9 §2): the spec compiles for the stage; the boot file is in the uploaded code
and byte-compiles; the flavor and engine exist in the service's own lists, with did-you-mean;
the node count is within the flavor's ``max_num``; an Ascend flavor goes with an Ascend engine
(and the other way round); each input's OBS path holds data (or, with ``--upload-inputs``, its
``local`` stand-in exists to be uploaded); the output, log and code buckets exist and take
writes; no job (active or ended) has the same name; the stage's checkpoint folder holds nothing
another stage or spec wrote (``service/checkpoints.py``); the inputs fit each node's /cache
(``service/dataplan.py``: a refusal when they cannot, a warning when they belong on SFS Turbo).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from majob.errors import (
    ConfigError,
    MajobError,
    ServiceAuthError,
    StorageAuthError,
    StorageNotFound,
)
from majob.service.base import Job, TrainingService
from majob.service.checkpoints import WHERE, CheckpointClaim, claim_problem
from majob.service.jobnames import jobs_named_like
from majob.service.offerings import Offerings
from majob.spec.models import JobSpec
from majob.storage.base import ObjectStore
from majob.storage.listing import iter_folder, object_named
from majob.storage.uri import ObsUri
from majob.text import did_you_mean

PROBE_PREFIX = ".majob-preflight/"
INVALID_FLAVOR = "ModelArts.2763"
NO_SUCH_BUCKET = "NoSuchBucket"
DUPLICATE_NAME = "ModelArts.2751"


@dataclass
class Findings:
    """Problem lines in the order found, each once."""

    problems: list[str] = field(default_factory=list)

    def add(self, line: str) -> None:
        if line not in self.problems:
            self.problems.append(line)

    def guard(self, where: str, check: Callable[[], None]) -> None:
        """Run ``check``; a majob error it raises becomes a problem line of ``where``, except
        refused credentials, which end the checks (``run_preflight`` says it once)."""
        try:
            check()
        except (StorageAuthError, ServiceAuthError):
            raise
        except MajobError as error:
            hint = f"; {error.hint}" if error.hint else ""
            self.add(f"{where}: {error.message}{hint}")


def check_boot_file(spec: JobSpec, uploaded: Sequence[str], findings: Findings) -> None:
    """The boot file is among the files the upload sends, and it byte-compiles."""
    if spec.image.is_custom:
        return
    boot = spec.code.boot_file
    if boot not in uploaded:
        findings.add(
            f"code.boot_file: {boot!r} is not in the uploaded code of {spec.code.dir} (missing, "
            "or left out by .gitignore, .majobignore or code.ignore); ModelArts.2758 would "
            "fail the job; fix the ignore rules or code.boot_file"
        )
        return
    path = Path(spec.code.dir) / boot
    try:
        source = path.read_bytes()
        compile(source, str(path), "exec", dont_inherit=True)
    except OSError as error:
        findings.add(f"code.boot_file: cannot read {path}: {error.strerror}")
    except (SyntaxError, ValueError) as error:
        where = f"{path}:{getattr(error, 'lineno', 0) or 0}"
        message = getattr(error, "msg", str(error))
        findings.add(f"code.boot_file: {where}: does not compile: {message}")


def check_offerings(spec: JobSpec, offerings: Offerings, findings: Findings) -> None:
    """Flavor and engine exist; nodes fit the flavor; Ascend goes with Ascend."""
    resources = spec.resources
    flavor = offerings.flavor(resources.flavor) if resources.flavor and not resources.pool else None
    if resources.pool is None and flavor is None:
        known = (f.id for f in offerings.flavors)
        findings.add(
            f"resources.flavor: {resources.flavor!r} is not a flavor of this service "
            f"({INVALID_FLAVOR}); {did_you_mean(resources.flavor or '', known)} "
            "(majob flavors lists them)"
        )
    if flavor is not None and resources.nodes > flavor.max_num:
        findings.add(
            f"resources.nodes: {resources.nodes} nodes, but flavor {flavor.id} allows at most "
            f"{flavor.max_num}; lower the node count or pick a flavor with a larger max_num"
        )
    engine_ascend: bool | None = None
    image = spec.image
    if image.engine is not None and image.version is not None:
        names = offerings.engine_names()
        if image.engine not in names:
            findings.add(
                f"image.engine: {image.engine!r} is not an engine of this service; "
                f"{did_you_mean(image.engine, names)} (majob engines lists them)"
            )
        else:
            versions = offerings.versions_of(image.engine)
            if image.version not in versions:
                findings.add(
                    f"image.version: {image.version!r} is not a version of {image.engine}; "
                    f"{did_you_mean(image.version, versions)}"
                )
            else:
                engine_ascend = next(
                    e.is_ascend
                    for e in offerings.engines
                    if e.name == image.engine and e.version == image.version
                )
    if resources.flavor is None and engine_ascend:
        findings.add(
            f"resources.pool: a dedicated CPU pool (no resources.flavor) does not run engine "
            f"{image.engine} {image.version} ({INVALID_FLAVOR}); give the pool's Ascend flavor"
        )
    if flavor is not None and engine_ascend is not None and flavor.is_ascend != engine_ascend:
        if flavor.is_ascend:
            findings.add(
                f"image.engine: flavor {flavor.id} has Ascend NPUs, but engine {image.engine} "
                f"{image.version} is not an Ascend engine; use Ascend-Powered-Engine"
            )
        else:
            findings.add(
                f"resources.flavor: engine {image.engine} {image.version} runs on Ascend NPUs, "
                f"but flavor {flavor.id} has none; pick an Ascend flavor"
            )


def _holds_data(store: ObjectStore, uri: ObsUri) -> bool:
    """An object at ``uri``, or one under it that is not a folder marker: the zero-byte
    ``dir/`` objects the console and other tools create hold no data."""
    if object_named(store, uri) is not None:
        return True
    return any(not (item.key.endswith("/") and item.size == 0) for item in iter_folder(store, uri))


def check_inputs(
    spec: JobSpec,
    store: ObjectStore,
    findings: Findings,
    *,
    upload_inputs: bool,
    profile_flag: str = "",
) -> None:
    """Each input's OBS path holds data, or (``--upload-inputs``) has a local stand-in."""
    for index, channel in enumerate(spec.inputs):
        where = f"inputs[{index}] {channel.name}"
        if upload_inputs:
            if channel.local is None:
                findings.add(
                    f"{where}: --upload-inputs needs a local stand-in: add 'local:' to the input"
                )
            elif not Path(channel.local).exists():
                findings.add(f"{where}: local stand-in {channel.local} does not exist")
            continue

        def check(uri: ObsUri = channel.obs, where: str = where, index: int = index) -> None:
            try:
                holds = _holds_data(store, uri)
            except StorageNotFound as error:
                if error.code != NO_SUCH_BUCKET:
                    raise
                findings.add(f"{where}: {no_bucket(uri.bucket, profile_flag)}")
                return
            if not holds:
                hint = (
                    "; pass --upload-inputs to upload its local stand-in first"
                    if spec.inputs[index].local
                    else "; upload the data there first (majob obs sync DIR " + uri.uri + ")"
                )
                findings.add(f"{where}: {uri} holds no data{hint}")

        findings.guard(where, check)


def no_bucket(bucket: str, profile_flag: str = "") -> str:
    """The problem line of a bucket that does not exist, with the command that makes it."""
    return (
        f"bucket {bucket!r} does not exist; make it with "
        f"`majob obs mb obs://{bucket}{profile_flag}`"
    )


def check_buckets(
    spec: JobSpec,
    store: ObjectStore,
    findings: Findings,
    *,
    profile_flag: str = "",
    made_later: bool = False,
) -> None:
    """The buckets the job writes to (outputs, logs, code) exist and take a write; one that
    does not exist is no problem when the submit will make it (``made_later``)."""
    places: dict[str, str] = {}
    for channel in spec.outputs:
        places.setdefault(channel.obs.bucket, f"outputs {channel.name}")
    if spec.log is not None:
        places.setdefault(spec.log.bucket, "log")
    if spec.code.obs is not None:
        places.setdefault(spec.code.obs.bucket, "code.obs")
    for bucket, where in places.items():

        def probe(bucket: str = bucket, where: str = where) -> None:
            key = f"{PROBE_PREFIX}{uuid.uuid4().hex}"
            try:
                store.put_bytes(bucket, key, b"")
            except StorageNotFound:
                if not made_later:
                    findings.add(f"{where}: {no_bucket(bucket, profile_flag)}")
                return
            store.delete_many(bucket, [key])

        findings.guard(f"{where} (bucket {bucket})", probe)


def check_name(
    job_name: str,
    service: TrainingService,
    findings: Findings,
    known: Sequence[Job] | None = None,
) -> None:
    """No job has the name, in any phase: ModelArts refuses it with 2751 while a job of that
    name exists, ended or not (its API reference of ValidateTrainingJobName: a job is created
    only when its name does not exist yet). Deleting the job frees the name. ``known``: the
    jobs a search of the name (or a part of it) already found, so it is not asked again."""

    def check() -> None:
        named = (
            (job for job in known if job.name == job_name)
            if known is not None
            else _named(service, job_name)
        )
        for job in named:
            free = (
                f"delete it (majob delete {job.id})"
                if job.finished
                else f"stop it first (majob stop {job.id}; the next submit is then numbered)"
            )
            findings.add(
                f"name: job name {job_name!r} is taken by job {job.id} ({job.phase}); "
                f"{DUPLICATE_NAME} would refuse it; {free} or rename this job "
                "(--set name=...)"
            )
            return

    findings.guard("name", check)


def _named(service: TrainingService, name: str) -> Iterator[Job]:
    """The jobs called exactly ``name`` (every page of the search read: it matches a part)."""
    return (job for job in jobs_named_like(service, name) if job.name == name)


def check_claim(claim: CheckpointClaim, store: ObjectStore, findings: Findings) -> None:
    """The checkpoint folder holds nothing another stage, another spec or an unknown writer
    left there (or ``--resume-from`` says what to resume from)."""
    problem = claim_problem(claim, store)
    if problem is not None:
        findings.add(problem)


def run_preflight(
    spec: JobSpec,
    *,
    job_name: str,
    uploaded: Sequence[str],
    service: TrainingService,
    store: ObjectStore,
    offerings: Callable[[], Offerings],
    upload_inputs: bool = False,
    earlier: Iterable[str] = (),
    profile_flag: str = "",
    make_buckets: bool = False,
    named: Sequence[Job] | None = None,
    claim: CheckpointClaim | None = None,
    warn: Callable[[str], None] = lambda line: None,
) -> list[str]:
    """Every problem found, one line each (``earlier``: problems found before, e.g. while
    compiling). ``spec`` is the stage's effective spec; ``profile_flag`` (`` --profile x``)
    goes into the commands the problems suggest; ``make_buckets``: the submit makes the
    buckets that do not exist (the emulator's, with ``--upload-inputs``); ``named``: the jobs
    a search for ``job_name`` found already (``check_name``); ``claim``: what the submit asks
    of its checkpoint folder (``service/checkpoints.py``); ``warn`` hears what does not stop
    the job (the inputs that belong on SFS Turbo, ``service/dataplan.py``)."""
    findings = Findings(list(earlier))
    check_boot_file(spec, uploaded, findings)  # a plan's own finding of it is not repeated

    def offered() -> None:
        check_offerings(spec, offerings(), findings)

    refused: StorageAuthError | ServiceAuthError | None = None
    try:
        findings.guard("flavors and engines", offered)
        check_inputs(spec, store, findings, upload_inputs=upload_inputs, profile_flag=profile_flag)
        check_buckets(spec, store, findings, profile_flag=profile_flag, made_later=make_buckets)
        if spec.inputs and not upload_inputs:  # inputs uploaded later cannot be sized yet
            findings.guard(
                "inputs' size", lambda: _check_data(spec, store, offerings, findings, warn)
            )
        check_name(job_name, service, findings, named)
        if claim is not None:
            findings.guard(WHERE, lambda: check_claim(claim, store, findings))
    except (StorageAuthError, ServiceAuthError) as error:
        refused = error
    if refused is not None:
        # Every remote check would be refused the same way: one line says it (and is raised
        # outside the ``except``, so the refusal does not ride along as its context).
        raise credentials_refused(refused)
    return findings.problems


def _check_data(
    spec: JobSpec,
    store: ObjectStore,
    offerings: Callable[[], Offerings],
    findings: Findings,
    warn: Callable[[str], None],
) -> None:
    from majob.service.dataplan import check_data, plan_data

    plan = plan_data(spec, store, offered=offerings().flavors, require_data=False)
    check_data(plan, findings.add, warn)


def credentials_refused(error: StorageAuthError | ServiceAuthError) -> ConfigError:
    """The one line for keys that OBS or ModelArts refused."""
    who = "OBS" if isinstance(error, StorageAuthError) else "ModelArts"
    code = f" ({error.code})" if error.code else f" (HTTP {error.status})" if error.status else ""
    return ConfigError(
        f"{who} refused the credentials{code}: check the access key and secret key "
        "(HUAWEICLOUD_SDK_AK / HUAWEICLOUD_SDK_SK or the credentials file); nothing was "
        "uploaded or created"
    )

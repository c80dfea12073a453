"""The spec digest: what a stage's gate compares (``pipeline/digests.py``) and what a checkpoint
folder's owner is recorded with (``service/checkpoints.py``).

It is taken over the normalised spec *without* ``stages`` (the per-stage overrides, the stages'
own output folders included): a debug stage that runs one epoch checks the same spec the formal
stage runs. It is the spec as written where a ``${VAR}`` filled a hyperparameter or env value
(``JobSpec.as_written``): the ledger keeps ``${TOKEN}``, never the token, and a rotated token
leaves the digest, and so the gates, as they were.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from majob.spec.expect import NO_EXPECT
from majob.spec.fault_tolerance import NO_FAULT_TOLERANCE
from majob.spec.models import JobSpec


def normalised_spec(spec: JobSpec) -> dict[str, Any]:
    """The spec as JSON, without its stage overrides, its values from the environment as the
    references that filled them. Without its ``sweep:`` block too: how many trials search what
    changes no job a stage runs (a sweep's local smoke stays passed when the search is edited),
    and the specs recorded before sweeps existed keep their digests. Without the fields added
    since (``fault_tolerance``, ``expect.resumes``, ``expect.perf``, ``expect.precision``,
    ``volumes``) while they
    hold their defaults, for the same reason: an upgrade of majob must not reopen every gate of an
    existing ledger. Without ``perf:`` at all: what ``--perf`` would profile changes nothing
    the job does; nor ``precision.grad`` (what ``--dump grad`` records), and
    ``precision.deterministic`` only when set."""
    written = spec.as_written()
    dumped = written.model_dump(mode="json", exclude={"stages", "sweep", "perf"})
    if written.fault_tolerance == NO_FAULT_TOLERANCE:
        del dumped["fault_tolerance"]
    if written.expect.resumes == NO_EXPECT.resumes:
        del dumped["expect"]["resumes"]
    if written.expect.perf is None:
        del dumped["expect"]["perf"]
    if written.expect.precision is None:
        del dumped["expect"]["precision"]
    if not written.volumes:
        del dumped["volumes"]
    if written.precision is not None:  # grad: what --dump grad records changes no training
        del dumped["precision"]["grad"]
        if not written.precision.deterministic:
            del dumped["precision"]["deterministic"]
    return dumped


def spec_digest(spec: JobSpec) -> str:
    canonical = json.dumps(normalised_spec(spec), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def cloud_spec_digest(spec: JobSpec) -> str:
    """The digest of the spec as a cloud job runs it: ``spec_digest`` without where this machine
    keeps the code and the inputs' and outputs' stand-ins (``code.dir``, each ``local``). A
    checkpoint folder's owner is recorded with it, so the same spec checked out elsewhere (a
    second clone, a teammate's machine, CI) is the same spec to that folder; the files the code
    is made of are the code digest's business. The gates keep ``spec_digest``."""
    cloud = normalised_spec(spec)
    del cloud["code"]["dir"]
    for channel in (*cloud["inputs"], *cloud["outputs"]):
        channel.pop("local", None)
    canonical = json.dumps(cloud, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()

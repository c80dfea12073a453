"""The spec's ``fault_tolerance:`` block as ModelArts reads it: annotations on the job, and the
checkpoint output marked for download before the job starts.

Sources (docs/fault-tolerance.md has the links): Huawei's "Unconditional Auto Restart" and
"Training Job Restart Upon Suspension" pages give the three annotations and the 1-128 range of
``fault-tolerance/job-retry-num``; ``huaweicloudsdkmodelarts``' ``JobMetadata`` lists the same
keys. "Resumable Training" says the checkpoint output needs "Predownload". The v2 create
reference we could read does not print that field for a job's outputs; the closest documented
spelling is ``prefetch_to_local`` (a boolean on algorithm output channels), which is what is
sent. Pure: no I/O.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from majob.spec.fault_tolerance import FaultTolerance

if TYPE_CHECKING:
    from majob.spec.models import JobSpec
    from majob.storage.uri import ObsUri

RETRY_NUM = "fault-tolerance/job-retry-num"
UNCONDITIONAL_RETRY = "fault-tolerance/job-unconditional-retry"
HANG_RETRY = "fault-tolerance/hang-retry"
PREDOWNLOAD_FIELD = "prefetch_to_local"


def fault_tolerance_annotations(block: FaultTolerance) -> dict[str, str]:
    """The ``metadata.annotations`` that ask ModelArts for ``block``'s restarts (none for
    ``retries: 0``: a job without the annotations is never restarted). Values are strings:
    annotations are a map of strings."""
    if block.retries == 0:
        return {}
    out = {RETRY_NUM: str(block.retries)}
    if block.restart_on == "any":
        out[UNCONDITIONAL_RETRY] = "true"
    if block.hang:
        out[HANG_RETRY] = "true"
    return out


def is_predownloaded(block: FaultTolerance, output_name: str) -> bool:
    """Whether the output ``output_name`` holds the checkpoints, so its files are downloaded
    into the container before the job (and each restart of it) starts."""
    return block.checkpoint_output == output_name


def checkpoint_uri(spec: JobSpec) -> ObsUri | None:
    """The checkpoint folder on OBS of ``spec``, a stage's spec (``JobSpec.at_stage``): inside
    that stage's own folder of the output (``obs://b/out/formal/ckpt/``); None without one."""
    block = spec.fault_tolerance
    output = next((o for o in spec.outputs if o.name == block.checkpoint_output), None)
    if output is None:
        return None
    folder = block.checkpoint_folder
    return output.obs.join(f"{folder}/") if folder else output.obs


def estimator_notes(block: FaultTolerance) -> list[str]:
    """What the notebook SDK's ``Estimator`` has no known argument for: it is said, not
    dropped (the REST body carries it)."""
    notes = [
        f"annotation {key}={value!r} has no Estimator argument; the REST body carries it "
        "(majob compile --target rest)"
        for key, value in fault_tolerance_annotations(block).items()
    ]
    if block.checkpoint_output is not None:
        notes.append(
            f"output {block.checkpoint_output!r} should be predownloaded (the checkpoints); "
            f"OutputData has no argument for it: the REST body sets {PREDOWNLOAD_FIELD}"
        )
    return notes

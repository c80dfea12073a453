"""The emulator's reading of the fault-tolerance annotations and its restart decisions, as
Huawei documents them (docs/fault-tolerance.md)."""

from __future__ import annotations

import pytest

from majob.emulator.modelarts.errors import ModelArtsError
from majob.emulator.modelarts.restarts import (
    JOB_FAILED,
    JOB_HANGED,
    NODE_FAULT,
    PROC_RESTART,
    RESCHEDULE,
    Fault,
    RestartPolicy,
    RunRecord,
    decide,
)

DIED = Fault(NODE_FAULT, "worker-1", "the node died")
FAILED = Fault(JOB_FAILED, "worker-0", "worker-0 exited with code 3")
HUNG = Fault(JOB_HANGED, "worker-0", "no output")


def _runs(*ends: tuple[Fault, str]) -> list[RunRecord]:
    return [RunRecord(0.0, fault=fault, recover=recover) for fault, recover in ends]


def test_the_annotations_read_as_documented() -> None:
    policy = RestartPolicy.from_annotations(
        {
            "fault-tolerance/job-retry-num": "128",
            "fault-tolerance/job-unconditional-retry": "true",
            "fault-tolerance/hang-retry": "false",
            "job_template": "Template DL",  # others are not ours to judge
        }
    )
    assert policy == RestartPolicy(retries=128, unconditional=True, hang_retry=False)
    assert RestartPolicy.from_annotations({}) == RestartPolicy()


@pytest.mark.parametrize(
    "annotations",
    [
        {"fault-tolerance/job-retry-num": "0"},
        {"fault-tolerance/job-retry-num": "129"},
        {"fault-tolerance/job-retry-num": 3},
        {"fault-tolerance/job-unconditional-retry": "True"},
    ],
)
def test_a_value_out_of_the_documented_range_is_a_400(annotations: dict[str, object]) -> None:
    with pytest.raises(ModelArtsError) as refused:
        RestartPolicy.from_annotations(annotations)
    assert refused.value.status == 400


def test_a_node_fault_reschedules_while_retries_are_left() -> None:
    policy = RestartPolicy(retries=2)
    assert decide(policy, DIED, []) == RESCHEDULE
    assert decide(policy, DIED, _runs((DIED, RESCHEDULE))) == RESCHEDULE
    assert decide(policy, DIED, _runs((DIED, RESCHEDULE), (DIED, RESCHEDULE))) is None
    assert decide(RestartPolicy(), DIED, []) is None


def test_the_scripts_own_failure_restarts_only_unconditionally_three_times_in_a_row() -> None:
    assert decide(RestartPolicy(retries=8), FAILED, []) is None
    policy = RestartPolicy(retries=8, unconditional=True)
    three = _runs(*[(FAILED, RESCHEDULE)] * 3)
    assert decide(policy, FAILED, three[:2]) == RESCHEDULE
    assert decide(policy, FAILED, three) is None
    # a node fault in between breaks the row
    assert decide(policy, FAILED, [*three[:2], *_runs((DIED, RESCHEDULE))]) == RESCHEDULE


def test_a_hang_restarts_in_place_without_using_a_retry() -> None:
    policy = RestartPolicy(retries=1, hang_retry=True)
    hangs = _runs(*[(HUNG, PROC_RESTART)] * 3)
    assert decide(policy, HUNG, []) == PROC_RESTART
    assert decide(policy, HUNG, hangs) is None  # three in a row at most
    # hang restarts leave the one retry for a node fault
    assert decide(policy, DIED, hangs) == RESCHEDULE
    assert decide(RestartPolicy(retries=5), HUNG, []) is None

"""Injected job faults are checked when they are added, not when a job meets them."""

from __future__ import annotations

import re
from typing import Any

import pytest

from majob.emulator.modelarts.jobfaults import JobFault


@pytest.mark.parametrize(
    ("fault", "message"),
    [
        ({}, "needs fail_at, delays or node_fault"),
        ({"node_fault": "explodes", "at_step": 1}, "'dies' or 'hangs'"),
        ({"node_fault": "dies"}, "at_step or after_seconds"),
        ({"node_fault": "dies", "at_step": 1, "after_seconds": 2}, "at_step or after_seconds"),
        ({"node_fault": "dies", "at_step": 0}, "from 1"),
        ({"node_fault": "hangs", "at_step": 1, "hang_window": 0}, "hang_window > 0"),
        ({"node_fault": "dies", "at_step": 1, "step_pattern": "("}, "step_pattern '('"),
    ],
)
def test_a_bad_node_fault_is_refused(fault: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        JobFault(**fault)


def test_a_node_fault_strikes_the_runs_it_names() -> None:
    once = JobFault(node_fault="dies", after_seconds=1)
    always = JobFault(node_fault="hangs", at_step=3, runs=None)
    assert [once.strikes_run(r) for r in (1, 2)] == [True, False]
    assert all(always.strikes_run(r) for r in (1, 2, 50))
    assert not JobFault(fail_at="Running").strikes_run(1)

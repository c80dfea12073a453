"""The emulator's per-minute CPU and memory averages, from given samples (no clock, no
processes), and one real sample of this test's own process group."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from majob.emulator.modelarts.usage import (
    Sample,
    UsageRecorder,
    group_sample,
    group_samples,
    saved_series,
)

GB = 1024**3


def recorder(tmp_path: Path, nodes: int = 1) -> UsageRecorder:
    return UsageRecorder(nodes, cores=4, memory_bytes=8 * GB, path=tmp_path / "usage.json")


def test_each_minute_averages_its_samples_as_shares_of_the_flavor(tmp_path: Path) -> None:
    usage = recorder(tmp_path)
    # Minute 0: 30 s at 2 of 4 cores, then 30 s idle; 2 GB then 4 GB resident.
    usage.record(0, Sample(0.0, 0.0, 2 * GB))
    usage.record(0, Sample(30.0, 60.0, 2 * GB))
    usage.record(0, Sample(59.0, 60.0, 4 * GB))
    # Minute 1 (under way): 1 core busy since the last sample of minute 0.
    usage.record(0, Sample(69.0, 70.0, 8 * GB))
    series = usage.series(0)
    assert series["cpuUsage"] == [round(60 / 59 / 4 * 100, 2), 25.0]
    assert series["memUsage"] == [round((2 + 2 + 4) / 3 / 8 * 100, 2), 100.0]
    assert series["gpuUtil"] == [-1.0, -1.0] and series["npuMemUsage"] == [-1.0, -1.0]


def test_one_look_has_no_cpu_rate_and_no_look_no_minutes(tmp_path: Path) -> None:
    usage = recorder(tmp_path, nodes=2)
    usage.record(0, Sample(0.5, 1.0, GB))
    assert usage.series(0)["cpuUsage"] == [-1.0]
    assert usage.series(0)["memUsage"] == [12.5]
    assert usage.series(1) == {name: [] for name in usage.series(1)}


def test_the_series_are_kept_when_saved(tmp_path: Path) -> None:
    usage = recorder(tmp_path)
    usage.record(0, Sample(0.0, 0.0, GB))
    usage.record(0, Sample(10.0, 20.0, GB))
    usage.save()
    assert saved_series(tmp_path / "usage.json", "worker-0") == usage.series(0)
    assert saved_series(tmp_path / "usage.json", "worker-1") is None
    assert saved_series(tmp_path / "missing.json", "worker-0") is None


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc on this system")
def test_a_group_sample_of_this_process_group_sees_it() -> None:
    taken = group_sample(os.getpgrp(), at=1.0)
    assert taken is not None and taken.at == 1.0
    assert taken.cpu_seconds > 0 and taken.rss_bytes > 0
    assert group_sample(2**22 + 12345, at=0.0) is None  # no such group


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="no /proc on this system")
def test_group_samples_take_every_node_from_one_look() -> None:
    missing, ours = 2**22 + 12345, os.getpgrp()
    taken = group_samples([missing, ours], at=2.0)
    assert taken[0] is None
    assert taken[1] is not None and taken[1].at == 2.0 and taken[1].rss_bytes > 0

"""A stage submitted again gets a numbered name when only ended jobs hold its own."""

from __future__ import annotations

from majob.service.base import Job
from majob.service.jobnames import NAME_LIMIT, free_name, numbered, search_stem


def job(name: str, phase: str = "Completed") -> Job:
    return Job(id=f"id-{name}-{phase}", name=name, phase=phase)


def test_a_free_name_is_kept() -> None:
    assert free_name("mnist-debug", []) == "mnist-debug"
    assert free_name("mnist-debug", [job("mnist-debug-old"), job("other")]) == "mnist-debug"


def test_a_name_only_ended_jobs_hold_is_numbered_with_the_first_free_number() -> None:
    assert free_name("mnist-debug", [job("mnist-debug")]) == "mnist-debug-2"
    held = [job("mnist-debug", "Failed"), job("mnist-debug-2"), job("mnist-debug-3", "Running")]
    assert free_name("mnist-debug", held) == "mnist-debug-4"
    assert free_name("mnist-debug", [job("mnist-debug"), job("mnist-debug-3")]) == "mnist-debug-2"


def test_a_name_an_active_job_holds_is_not_numbered() -> None:
    assert free_name("mnist-debug", [job("mnist-debug"), job("mnist-debug", "Running")]) is None
    assert free_name("mnist-debug", [job("mnist-debug", "Pending")]) is None


def test_a_long_name_is_cut_to_make_room_for_its_number() -> None:
    name = "n" * NAME_LIMIT
    assert numbered(name, 12) == "n" * (NAME_LIMIT - 3) + "-12"
    assert len(numbered(name, 12)) == NAME_LIMIT
    assert free_name(name, [job(name), job(numbered(name, 2))]) == numbered(name, 3)
    assert numbered(name, 99999).startswith(search_stem(name))

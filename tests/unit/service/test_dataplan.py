"""The data plan's verdict from its figures: cannot fit, move to SFS Turbo, keep on OBS."""

from __future__ import annotations

from majob.service.dataplan import (
    MANY_SMALL_FILES,
    SHARED_LARGE,
    DataPlan,
    InputSize,
    cache_of,
    check_data,
)

GB = 10**9


def _plan(total: int, *, nodes: int = 1, cache: int | None = 100 * GB, small: int = 0) -> DataPlan:
    size = InputSize("data_url", "obs://b/data/", total, max(small, 1), total, small)
    return DataPlan((size,), nodes, "modelarts.vm.cpu.8u", cache, "test")


def test_inputs_over_the_cache_cannot_fit_and_the_preflight_refuses() -> None:
    plan = _plan(101 * GB)
    problems: list[str] = []
    warnings: list[str] = []
    check_data(plan, problems.append, warnings.append)
    assert plan.verdict == "cannot fit" and not warnings
    assert problems and "101 GB of inputs is more than its 100 GB /cache" in problems[0]


def test_more_than_half_the_cache_many_nodes_or_many_small_files_say_sfs() -> None:
    assert _plan(60 * GB).verdict == "sfs"
    assert _plan(SHARED_LARGE, nodes=4, cache=10_000 * GB).verdict == "sfs"
    assert _plan(SHARED_LARGE, nodes=1, cache=10_000 * GB).verdict == "obs"
    many = _plan(MANY_SMALL_FILES * 1000, small=MANY_SMALL_FILES)
    assert many.verdict == "sfs" and "files under 1 MiB" in many.reasons()[0]
    warnings: list[str] = []
    check_data(many, lambda line: None, warnings.append)
    assert warnings and "consider SFS Turbo" in warnings[0]


def test_small_inputs_stay_on_obs_and_an_unknown_cache_is_never_refused() -> None:
    assert _plan(GB).verdict == "obs"
    unknown = _plan(10_000 * GB, cache=None)
    assert (
        unknown.verdict == "obs" and "/cache of modelarts.vm.cpu.8u: unknown" in unknown.lines()[2]
    )


def test_the_cache_comes_from_the_service_then_the_catalogue() -> None:
    assert cache_of("modelarts.vm.cpu.8u") == (100 * GB, "flavor_info.disk of majob's catalogue")
    size, source = cache_of("modelarts.pool.visual.xlarge")
    assert size is None and "--cache-size" in source

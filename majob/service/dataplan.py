"""How much each node downloads before training, and whether the data belongs on SFS Turbo.

ModelArts downloads every input into every node's container before the boot file starts
(reference modelarts.md §3.2): a job's download is the inputs' size times its node count, and
each node's copy must fit the node's local disk, the ``/cache`` volume its flavor lists as
``flavor_info.disk``. One listing per input sizes it (no download). The verdict, with the
thresholds docs/data.md explains:

- **cannot fit**: one node's inputs are larger than its /cache: the job fails or is evicted
  once the disk fills, so ``majob submit`` refuses it;
- **move to SFS Turbo**: the inputs take more than half the /cache (the rest is the outputs',
  checkpoints' and the image's), or several nodes each download 100 GB or more of the same
  data, or an input holds 100,000 small files or more (each a request of its own);
- **keep on OBS** otherwise.

``majob data plan`` prints the plan; the submit's pre-flight runs the same (``check_data``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, replace
from typing import Literal

from majob.errors import UserInputError
from majob.sizes import format_size
from majob.spec.catalog import FLAVORS, Flavor
from majob.spec.models import Input, JobSpec
from majob.storage.base import ObjectInfo, ObjectStore
from majob.storage.listing import iter_folder, object_named

SMALL_FILE = 2**20  # below 1 MiB a download is mostly its request's round trip
MANY_SMALL_FILES = 100_000
SHARED_LARGE = 100 * 10**9  # bytes one node downloads that several nodes should share instead
CACHE_SHARE = 0.5  # the inputs' share of /cache above which the rest is too tight
# Per node, when the user gives none: an assumption (ModelArts publishes no download rate for a
# training container), stated in the plan; --bandwidth replaces it.
DEFAULT_BANDWIDTH = 200 * 10**6  # bytes per second
REQUEST_SECONDS = 0.02  # one object's round trip, spread over PARALLEL requests
PARALLEL = 16

Verdict = Literal["obs", "sfs", "cannot fit"]


@dataclass(frozen=True)
class InputSize:
    """One input as one listing saw it."""

    name: str
    uri: str
    total: int = 0
    objects: int = 0
    largest: int = 0
    small: int = 0  # objects under SMALL_FILE

    @property
    def small_share(self) -> float:
        return self.small / self.objects if self.objects else 0.0


def size_input(store: ObjectStore, channel: Input) -> InputSize:
    """``channel``'s objects, counted from one listing (one HEAD for a single file)."""
    uri = channel.obs
    infos: Iterable[ObjectInfo]
    if not uri.is_dir:
        found = object_named(store, uri)
        infos = [found] if found is not None else []
    else:
        infos = (i for i in iter_folder(store, uri) if not i.key.endswith("/"))
    total = count = largest = small = 0
    for info in infos:
        total, count = total + info.size, count + 1
        largest = max(largest, info.size)
        small += info.size < SMALL_FILE
    return InputSize(channel.name, str(uri), total, count, largest, small)


@dataclass(frozen=True)
class DataPlan:
    """What a job's nodes download, against the /cache they have."""

    inputs: tuple[InputSize, ...]
    nodes: int
    flavor: str
    cache_bytes: int | None
    cache_source: str
    bandwidth: int = DEFAULT_BANDWIDTH
    bandwidth_source: str = "assumed (no published figure); --bandwidth to set it"
    epochs: int | None = None  # the spec's ``epochs`` hyperparameter, when it has one

    @property
    def per_node(self) -> int:
        return sum(i.total for i in self.inputs)

    @property
    def objects(self) -> int:
        return sum(i.objects for i in self.inputs)

    @property
    def download_seconds(self) -> float:
        """One node's download: its bytes at the bandwidth, its objects' round trips."""
        return self.per_node / self.bandwidth + self.objects * REQUEST_SECONDS / PARALLEL

    @property
    def verdict(self) -> Verdict:
        return verdict_of(self)[0]

    def reasons(self) -> list[str]:
        return verdict_of(self)[1]

    def lines(self) -> list[str]:
        """The plan in words: the figures, then the verdict and why."""
        cache = format_size(self.cache_bytes) if self.cache_bytes is not None else "unknown"
        lines = [
            f"each of {self.nodes} node(s) downloads {format_size(self.per_node)} "
            f"({self.objects} objects) before training: {format_size(self.per_node * self.nodes)} "
            "for the job",
            f"download per node: about {_duration(self.download_seconds)} at "
            f"{format_size(self.bandwidth)}/s ({self.bandwidth_source})",
            f"/cache of {self.flavor}: {cache} ({self.cache_source})",
        ]
        if self.epochs and self.epochs > 1:
            read = self.per_node * self.epochs
            lines.append(
                f"over {self.epochs} epochs each node reads {format_size(read)} "
                f"({format_size(read * self.nodes)} for the job): from its /cache copy, or over "
                "the network from SFS Turbo"
            )
        advice = {
            "obs": "keep the inputs on OBS",
            "sfs": "move the inputs to SFS Turbo and mount them (volumes:)",
            "cannot fit": "the inputs cannot fit the /cache: stage them to SFS Turbo",
        }[self.verdict]
        return [*lines, f"recommendation: {advice}", *(f"  - {r}" for r in self.reasons())]


def verdict_of(plan: DataPlan) -> tuple[Verdict, list[str]]:
    """The verdict and the figures that decided it."""
    per_node, cache = plan.per_node, plan.cache_bytes
    if cache is not None and per_node > cache:
        return "cannot fit", [
            f"one node's {format_size(per_node)} of inputs is more than its "
            f"{format_size(cache)} /cache: the disk fills and the job fails or is evicted"
        ]
    reasons = []
    if cache is not None and per_node > cache * CACHE_SHARE:
        reasons.append(
            f"the inputs take {per_node / cache:.0%} of the /cache, which also holds the "
            "outputs, checkpoints and logs"
        )
    if plan.nodes > 1 and per_node >= SHARED_LARGE:
        reasons.append(
            f"{plan.nodes} nodes each download the same {format_size(per_node)}: one copy on "
            "SFS Turbo serves them all"
        )
    for size in plan.inputs:
        if size.small >= MANY_SMALL_FILES:
            reasons.append(
                f"{size.name} holds {size.small} files under 1 MiB: a request each from OBS, "
                "read as files from SFS Turbo"
            )
    if reasons:
        return "sfs", reasons
    return "obs", ["the inputs fit the /cache with room to spare"]


def cache_of(flavor_id: str, offered: Iterable[Flavor] = ()) -> tuple[int | None, str]:
    """The /cache of ``flavor_id`` and where the figure comes from: the service's flavor list,
    else majob's catalogue (the documented list's ``flavor_info.disk``)."""
    for source, flavors in (("the service's flavor list", offered), ("majob's catalogue", FLAVORS)):
        flavor = next((f for f in flavors if f.id == flavor_id), None)
        if flavor is not None and flavor.disk_bytes is not None:
            return flavor.disk_bytes, f"flavor_info.disk of {source}"
    return None, "the flavor lists no disk size; --cache-size to give it"


def plan_data(
    spec: JobSpec,
    store: ObjectStore,
    *,
    cache_size: int | None = None,
    bandwidth: int | None = None,
    offered: Iterable[Flavor] = (),
    require_data: bool = True,
) -> DataPlan:
    """The plan of ``spec`` (a stage's effective spec): one listing per input. An input that
    holds nothing is a ``UserInputError`` unless not ``require_data`` (the pre-flight, which
    says so itself)."""
    cache, cache_source = (
        (cache_size, "given with --cache-size")
        if cache_size is not None
        else cache_of(spec.resources.flavor or "", offered)
    )
    sizes = tuple(size_input(store, channel) for channel in spec.inputs)
    empty = [size for size in sizes if not size.objects]
    if require_data and empty:
        raise UserInputError(
            f"input {empty[0].name} ({empty[0].uri}) holds no objects: nothing to plan",
            hint=f"upload the data first, e.g. majob obs sync LOCAL_DIR {empty[0].uri}",
        )
    plan = DataPlan(
        inputs=sizes,
        nodes=spec.resources.nodes,
        flavor=spec.resources.flavor or f"pool {spec.resources.pool}",
        cache_bytes=cache,
        cache_source=cache_source,
        epochs=_epochs(spec),
    )
    if bandwidth is None:
        return plan
    return replace(plan, bandwidth=bandwidth, bandwidth_source="given with --bandwidth")


def check_data(plan: DataPlan, problem: Callable[[str], None], warn: Callable[[str], None]) -> None:
    """The pre-flight's part: a refusal when the inputs cannot fit the /cache, a warning when
    they belong on SFS Turbo."""
    if plan.verdict == "cannot fit":
        problem(
            f"inputs: {plan.reasons()[0]}; stage them to SFS Turbo and mount them (volumes:, "
            "docs/data.md), or use a flavor with a larger disk"
        )
    elif plan.verdict == "sfs":
        warn(f"inputs: consider SFS Turbo ({'; '.join(plan.reasons())}); majob data plan SPEC")


def _epochs(spec: JobSpec) -> int | None:
    value = spec.hyperparameters.get("epochs")
    return value if isinstance(value, int) and not isinstance(value, bool) and value > 0 else None


def _duration(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f} s"
    if seconds < 3600:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"

"""majob's findings: what slows the steps down, what it would save, what to change.

Each rule reads the step breakdown of every rank (``analyse.RankProfile``) and says how many
milliseconds per step a change would save, on the rank where it saves most. The estimate is
``measured`` when it is time the trace shows spent in the thing itself (waiting for data, in a
sync, in the collector), ``inferred`` when it is a share of such time that experience says a
change recovers (batching small operators, a multi-tensor optimizer).
"""

from __future__ import annotations

import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from majob.perf.analyse import RankProfile
from majob.perf.timeline import SMALL_OP_US

MIN_SHARE = 0.02  # a finding that saves less than this share of a step is not listed
SMALL_OPS_RECOVERED = 0.5  # of the time in small operators and the gaps between them
LOOP_OPTIMIZER_RECOVERED = 0.6  # of a per-parameter (for-loop) optimizer's time
MULTI_TENSOR_RECOVERED = 0.2  # ... of a _foreach_ one's (fused kernels, fewer launches)
MANY_OPTIMIZER_OPS = 50  # fewer operators per step in optimizer.step() leave nothing to fuse
SLOW_RANK = 1.1  # a rank this much slower than the median rank holds every rank back


@dataclass(frozen=True)
class Finding:
    key: str  # data_wait, host_sync, gc, small_ops, optimizer, host_gaps, slow_rank, msprof:*
    title: str
    saving_ms: float  # per step
    share: float  # of the step time
    evidence: str
    advice: tuple[str, ...]
    source: str = "majob"  # or "msprof-analyze", or "majob + msprof-analyze"
    basis: str = "measured"  # or "inferred"
    where: str = ""  # the rank it was measured on
    also: tuple[str, ...] = field(default_factory=tuple)  # what another source said about it


Rule = Callable[[RankProfile], Finding]


def _finding(profile: RankProfile, key: str, saving_ms: float, **kwargs: object) -> Finding:
    step = sum(profile.typical.values())
    share = saving_ms / step if step > 0 else 0.0
    return Finding(key=key, saving_ms=saving_ms, share=share, where=profile.label, **kwargs)  # type: ignore[arg-type]


def data_wait(profile: RankProfile) -> Finding:
    wait = profile.typical["data"]
    single = "SingleProcess" in profile.loader
    advice = [
        "DataLoader(num_workers=N): this loader runs in the training process (num_workers=0); "
        "start with N = the CPUs per device (4-8), persistent_workers=True"
        if single
        else "the loader's workers cannot keep up: more num_workers, a larger prefetch_factor",
        "make __getitem__ cheaper: decode/augment once and cache, read from local disk "
        "(on ModelArts copy the data to /cache first)",
    ]
    if profile.device not in ("cpu", ""):
        advice.append("pin_memory=True and .to(device, non_blocking=True) for the batches")
    loader = profile.loader or "DataLoader"
    return _finding(
        profile,
        "data_wait",
        wait,
        title="the step waits for data",
        evidence=f"{loader}.__next__ takes {wait:.3g} ms of each step",
        advice=tuple(advice),
    )


def host_sync(profile: RankProfile) -> Finding:
    syncs = profile.mean("syncs")
    return _finding(
        profile,
        "host_sync",
        profile.typical["sync"],
        title="host-device syncs in the loop (.item(), synchronize)",
        evidence=f"{syncs:.3g} sync call(s) per step (aten::item, _local_scalar_dense, "
        f"*Synchronize*), {profile.typical['sync']:.3g} ms",
        advice=(
            "keep values on the device: total += loss.detach(); call .item() once every N "
            "steps (when you log), or after the loop",
            "no `if tensor:`, tensor.tolist(), print(tensor) or float(tensor) per step or per "
            "element",
            "on a GPU/NPU each sync also stalls the device queue: the saving there is larger",
        ),
    )


def gc_pauses(profile: RankProfile) -> Finding:
    return _finding(
        profile,
        "gc",
        profile.typical["gc"],
        title="garbage-collector pauses",
        evidence=f"the collector runs {profile.typical['gc']:.3g} ms per step (majob_steps' gc_ns)",
        advice=(
            "gc.freeze() once the model and the data are set up (long-lived objects leave "
            "the collector's generations)",
            "or gc.disable() before the loop and gc.collect() every N steps",
            "create fewer objects with reference cycles per step",
        ),
        basis="measured",
    )


def small_ops(profile: RankProfile) -> Finding:
    count = profile.mean("small_ops")
    spent = profile.mean("small_time") / 1e3 + profile.typical["dispatch"]
    return _finding(
        profile,
        "small_ops",
        spent * SMALL_OPS_RECOVERED,
        title="host-bound: many small operators",
        evidence=f"{count:.0f} operators under {SMALL_OP_US:.0f} us per step, "
        f"{spent:.3g} ms with the gaps between them",
        advice=(
            "batch them: one tensor operation over a stacked tensor instead of a Python loop "
            "of small ones (torch.stack/cat, vectorised indexing)",
            "on GPU torch.compile fuses them; on an NPU fewer, larger operators (the host "
            "dispatches one by one) and TASK_QUEUE_ENABLE=2",
        ),
        basis="inferred",
    )


def optimizer_time(profile: RankProfile) -> Finding:
    spent = profile.typical["optimizer"]
    multi = profile.multi_tensor
    recovered = MULTI_TENSOR_RECOVERED if multi else LOOP_OPTIMIZER_RECOVERED
    if profile.mean("optimizer_ops") < MANY_OPTIMIZER_OPS:
        recovered = 0.0  # a few operators: nothing to fuse
    name = profile.optimizer or "the optimizer"
    advice = (
        f"{name}(..., fused=True) on GPU, or foreach=True: one kernel per group of tensors"
        if not multi
        else f"{name}(..., fused=True) where the device supports it",
        "on an NPU: torch_npu's fused optimizers (torch_npu.optim.NpuFusedAdamW, "
        "NpuFusedSGD ...), or fused=True where torch_npu supports it",
    )
    return _finding(
        profile,
        "optimizer",
        spent * recovered,
        title="the optimizer step" + (" runs tensor by tensor" if not multi else ""),
        evidence=f"{name}.step and zero_grad take {spent:.3g} ms per step, "
        f"{profile.mean('optimizer_ops'):.0f} operators"
        + ("" if multi else " (no _foreach_/_fused_ kernel)"),
        advice=advice,
        basis="inferred",
    )


def host_gaps(profile: RankProfile) -> Finding:
    spent = profile.typical["host"]
    gaps = profile.mean("long_gap_count")
    return _finding(
        profile,
        "host_gaps",
        spent,
        title="host gaps: Python runs no operator",
        evidence=f"{spent:.3g} ms in gaps over 50 us that every step has between the same "
        f"operators ({gaps:.3g} long gap(s) in the median step), no operator running on the "
        "training thread",
        advice=(
            "move per-step Python work out of the loop or into a thread: checkpointing, "
            "logging, evaluation, file I/O, time.sleep",
            "profile with stacks (perf: {with_stack: true}) to see which lines they are",
        ),
    )


RULES: tuple[Rule, ...] = (data_wait, host_sync, gc_pauses, small_ops, optimizer_time, host_gaps)


def slow_rank(profiles: Sequence[RankProfile]) -> Finding | None:
    """The slowest rank against the median: in synchronous data parallel training every rank
    waits for it at each all-reduce."""
    if len(profiles) < 2:
        return None
    median = statistics.median(p.p50 for p in profiles)
    slowest = max(profiles, key=lambda p: p.p50)
    if not median or slowest.p50 < SLOW_RANK * median:
        return None
    saving = slowest.p50 - median
    return Finding(
        key="slow_rank",
        title=f"{slowest.label} is slower than the other ranks",
        saving_ms=saving,
        share=saving / slowest.p50,
        evidence=f"step p50 {slowest.p50:.3g} ms against a median of {median:.3g} ms over "
        f"{len(profiles)} ranks",
        advice=(
            "compare its breakdown with the others' (majob perf --format json): data shards "
            "of unequal size or cost, a busier node, a slower disk",
            "DistributedSampler(drop_last=True) for equal shards",
        ),
        where=slowest.label,
    )


def findings(profiles: Sequence[RankProfile]) -> list[Finding]:
    """Every finding that saves at least ``MIN_SHARE`` of a step, the largest saving first;
    each rule on the rank where it saves most."""
    found: list[Finding] = []
    for rule in RULES:
        best = max((rule(p) for p in profiles), key=lambda f: f.saving_ms)
        if best.share >= MIN_SHARE:
            found.append(best)
    ranks = slow_rank(profiles)
    if ranks is not None and ranks.share >= MIN_SHARE:
        found.append(ranks)
    return sorted(found, key=lambda f: -f.saving_ms)

"""Profile a training script the way majob's collection side does, for the diagnosis tests.

    python profile_script.py SCRIPT OUT_DIR [--rank R] [--node N] [--active K]

It runs SCRIPT as ``__main__`` under ``torch.profiler`` with a schedule advanced from every
optimizer ``step()`` (torch's global post hook), and writes the Ascend PyTorch profiler layout
majob perf reads: ``OUT_DIR/profiling/worker-<N>-rank<R>_<ts>_ascend_pt/`` with
``ASCEND_PROFILER_OUTPUT/trace_view.json`` (``export_chrome_trace``), ``profiler_info_<R>.json``
and ``majob_steps_<R>.jsonl`` (every step's start, end and time in the garbage collector).
A test helper standing in for the collection side, not part of majob.
"""

from __future__ import annotations

import argparse
import gc
import json
import runpy
import sys
import time
from pathlib import Path

import torch
from torch.optim.optimizer import register_optimizer_step_post_hook
from torch.profiler import ProfilerAction, profile, schedule


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("script")
    parser.add_argument("out")
    parser.add_argument("--rank", type=int, default=0)
    parser.add_argument("--node", type=int, default=0)
    parser.add_argument("--active", type=int, default=6)
    args = parser.parse_args()
    stamp = time.strftime("%Y%m%d%H%M%S")
    folder = Path(args.out) / "profiling" / f"worker-{args.node}-rank{args.rank}_{stamp}_ascend_pt"
    (folder / "ASCEND_PROFILER_OUTPUT").mkdir(parents=True)
    steps = (folder / f"majob_steps_{args.rank}.jsonl").open("w", encoding="utf-8")
    in_gc = [0, 0]  # collector time so far, start of the running collection

    def on_gc(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            in_gc[1] = time.perf_counter_ns()
        else:
            in_gc[0] += time.perf_counter_ns() - in_gc[1]

    def ready(prof: profile) -> None:
        prof.export_chrome_trace(str(folder / "ASCEND_PROFILER_OUTPUT" / "trace_view.json"))

    prof = profile(
        schedule=schedule(wait=1, warmup=1, active=args.active, repeat=1), on_trace_ready=ready
    )
    state = {"step": 0, "start": time.perf_counter_ns(), "gc": 0}

    def hook(optimizer: object, a: object, k: object) -> None:
        now = time.perf_counter_ns()
        recording = prof.current_action in (ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE)
        line = {
            "step": state["step"],
            "start_ns": state["start"],
            "end_ns": now,
            "gc_ns": in_gc[0] - state["gc"],
            "profiled": recording,
        }
        steps.write(json.dumps(line) + "\n")
        steps.flush()
        state.update(step=state["step"] + 1, start=now, gc=in_gc[0])
        prof.step()

    gc.callbacks.append(on_gc)
    register_optimizer_step_post_hook(hook)
    reason = "exit"
    prof.start()
    try:
        sys.argv = [args.script]
        runpy.run_path(args.script, run_name="__main__")
    except BaseException:
        reason = "exception"
        raise
    finally:
        prof.stop()
        steps.close()
        info = {
            "rank_id": args.rank,
            "node": args.node,
            "device": "cpu",
            "torch": torch.__version__,
            "config": {"active": args.active},
            "steps": [0, max(state["step"] - 1, 0)],
            "complete": True,
            "reason": reason,
        }
        (folder / f"profiler_info_{args.rank}.json").write_text(json.dumps(info))


if __name__ == "__main__":
    main()

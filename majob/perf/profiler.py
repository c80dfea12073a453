"""The profiler side of ``bootstrap.py``: loaded by path on a node once torch is imported.

Standard library only at import (torch comes as an argument), no import of ``majob``.

- CPU or GPU: ``torch.profiler.profile`` with the CPU activity (and CUDA when
  ``torch.cuda.is_available()``), torch's ``schedule``; a recorded cycle is written with
  ``export_chrome_trace`` to ``<worker>_<ts>_ascend_pt/ASCEND_PROFILER_OUTPUT/trace_view.json``.
- An NPU (``torch_npu`` imported by then or importable, not majob's CPU stand-in, with
  ``torch_npu.npu.is_available()``): ``torch_npu.profiler.profile`` with the CPU and NPU
  activities, ``torch_npu.profiler.schedule`` and ``_ExperimentalConfig(profiler_level=
  ProfilerLevel.<Level0|1|2>)``; its own ``tensorboard_trace_handler(profiling_dir,
  worker_name=...)`` writes the Ascend layout (``<worker>_<ts>_ascend_pt/``), left as it is.

And the profile's two stops besides ``atexit``: a SIGTERM handler and an ``excepthook`` wrapper.
"""

from __future__ import annotations

import contextlib
import glob
import os
import signal
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

LEVELS = {"level0": "Level0", "level1": "Level1", "level2": "Level2"}


def _npu(torch: Any) -> Any:
    """``torch_npu`` when this process can profile an NPU with it, else None."""
    import importlib
    import importlib.util

    module: Any = sys.modules.get("torch_npu")
    if module is None:
        found = importlib.util.find_spec("torch_npu")
        # majob's CPU stand-in (runner/npu_standin) is no NPU and has no profiler.
        if found is None or "npu_standin" in (found.origin or ""):
            return None
        module = importlib.import_module("torch_npu")
    if getattr(module, "__majob_standin__", False) or not hasattr(module, "profiler"):
        return None
    try:
        return module if module.npu.is_available() else None
    except Exception:  # a driver that does not answer: profile the host side only
        return None


def arm(torch: Any, perf: dict[str, Any], on_ready: Callable[[Any], None]) -> tuple[Any, str]:
    """A profiler with the perf block's schedule, not started; and the device it profiles."""
    schedule_args = {
        "wait": int(perf.get("wait", 0)),
        "warmup": int(perf.get("warmup", 1)),
        "active": int(perf.get("active", 3)),
        "repeat": int(perf.get("repeat", 1)),
        "skip_first": int(perf.get("skip_first", 2)),
    }
    options = {
        "record_shapes": bool(perf.get("shapes", False)),
        "profile_memory": bool(perf.get("memory", False)),
        "with_stack": bool(perf.get("stacks", False)),
    }
    npu = _npu(torch)
    if npu is not None:
        profiler = npu.profiler
        level = getattr(profiler.ProfilerLevel, LEVELS[str(perf.get("level", "level0"))])
        return profiler.profile(
            activities=[profiler.ProfilerActivity.CPU, profiler.ProfilerActivity.NPU],
            schedule=profiler.schedule(**schedule_args),
            on_trace_ready=on_ready,
            experimental_config=profiler._ExperimentalConfig(profiler_level=level),
            **options,
        ), "npu"
    activities = [torch.profiler.ProfilerActivity.CPU]
    device = "cpu"
    if torch.cuda.is_available():
        activities.append(torch.profiler.ProfilerActivity.CUDA)
        device = "cuda"
    return torch.profiler.profile(
        activities=activities,
        schedule=torch.profiler.schedule(**schedule_args),
        on_trace_ready=on_ready,
        **options,
    ), device


def export(prof: Any, state: Any, first: str | None) -> str:
    """Write the recorded cycle; the folder it is in (``first``: the process's own folder, for
    its first cycle)."""
    profiling_dir = state.config["profiling_dir"]
    if state.device == "npu":
        handler = sys.modules["torch_npu"].profiler.tensorboard_trace_handler
        before = set(glob.glob(os.path.join(profiling_dir, f"{state.worker()}_*_ascend_pt")))
        handler(profiling_dir, worker_name=state.worker())(prof)
        made = set(glob.glob(os.path.join(profiling_dir, f"{state.worker()}_*_ascend_pt")))
        new = sorted(made - before)
        return new[-1] if new else (first or state.folder())
    folder = first if first is not None else state.new_folder()
    trace = os.path.join(folder, "ASCEND_PROFILER_OUTPUT", "trace_view.json")
    os.makedirs(os.path.dirname(trace), exist_ok=True)
    prof.export_chrome_trace(trace)
    return folder


def on_sigterm(state: Any) -> None:
    """SIGTERM: stop the profile, then die of the signal as the process would have."""
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except ValueError:  # not the main thread's interpreter
        return

    def handler(signum: int, frame: Any) -> None:
        state.stop("signal")
        if callable(previous):
            previous(signum, frame)
            return
        signal.signal(signal.SIGTERM, previous or signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTERM)

    with contextlib.suppress(ValueError):
        signal.signal(signal.SIGTERM, handler)


def on_exception(state: Any) -> None:
    hook = sys.excepthook

    def excepthook(kind: Any, value: Any, traceback: Any) -> None:
        state.failed = True
        hook(kind, value, traceback)

    sys.excepthook = excepthook

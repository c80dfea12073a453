"""The node half of ``--perf`` and of every run's step time: loaded by the run's ``sitecustomize``
when ``MAJOB_PERF`` names a configuration file (or run as a cloud job's boot file, ``launch``).

Standard library only at import, and no import of ``majob`` (the node may run another
interpreter). Nothing happens until torch is imported; once ``import torch`` is done (a meta-path
finder wraps the module's execution):

- torch's global optimizer step post hook (``register_optimizer_step_post_hook``) ends a step: its
  start and end (``perf_counter_ns``) and the time the garbage collector ran in it
  (``gc.callbacks``) go to ``majob_steps_<R>.jsonl``, one line per step, flushed as it goes;
  step 0 starts at the first module call (a one-shot global forward pre-hook); every
  ``step_line_seconds`` the process says its recent step time on stderr (``steplog.py``, the
  recorder, beside this file);
- in ``profile`` mode a profiler is armed at the same time (``torch.profiler``, CPU activity and
  CUDA when available; ``torch_npu.profiler`` with NPU activity and ``_ExperimentalConfig`` when
  torch_npu and an NPU are there) with torch's schedule, and each optimizer step advances it
  (``ProfilerStep#N`` in the trace is majob's step N). A script that never steps an optimizer is
  profiled by time windows: once ``window_seconds`` have passed since its first module call with
  no step, every ``window_seconds`` counts as one (checked at module calls);
- the profile stops cleanly when its schedule is done, at exit, after an uncaught exception and on
  SIGTERM (the node's default handler comes back and the signal is raised again): what was
  recorded is exported and ``profiler_info_<R>.json`` says whether it is complete and why it
  stopped. A ``kill -9`` leaves no info file: the analysis then says the profile is partial.

Layout (``profile``): ``<profiling>/<worker>_<ts>_ascend_pt/`` per node and rank (worker:
``worker-<node>-rank<R>``), holding ``ASCEND_PROFILER_OUTPUT/trace_view.json``,
``profiler_info_<R>.json`` and ``majob_steps_<R>.jsonl``; each further ``repeat`` cycle writes a
folder of its own (trace and info). ``steps`` mode: ``<steps>/<worker>/majob_steps_<R>.jsonl``.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.machinery
import json
import os
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_ENV = "MAJOB_PERF"
STEPS_FILE = "majob_steps_{rank}.jsonl"
INFO_FILE = "profiler_info_{rank}.json"
TRACE_FILE = "ASCEND_PROFILER_OUTPUT/trace_view.json"


def _rank() -> int:
    """The process's rank: torch.distributed's once it is up, else RANK, else ``--rank``."""
    dist = sys.modules.get("torch.distributed")
    try:
        if dist is not None and dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:  # a half-torn-down group: the other sources still answer
        pass
    value = os.environ.get("RANK", "")
    if value.isdigit():
        return int(value)
    for index, arg in enumerate(sys.argv):
        if arg.startswith("--rank="):
            value = arg.split("=", 1)[1]
        elif arg == "--rank" and index + 1 < len(sys.argv):
            value = sys.argv[index + 1]
        if value.isdigit():
            return int(value)
    return 0


def _node() -> int:
    value = os.environ.get("VC_TASK_INDEX", "")
    return int(value) if value.isdigit() else 0


def _stamp() -> str:
    """torch_npu's folder time stamp (``%Y%m%d%H%M%S%f``), cut to milliseconds."""
    now = time.time()
    return time.strftime("%Y%m%d%H%M%S", time.localtime(now)) + f"{int(now % 1 * 1000):03d}"


def profiled_steps(perf: dict[str, Any]) -> set[int]:
    """The steps (from 0) torch's schedule records, ``spec/perf.py``'s ``Perf.profiled_steps``."""
    skip, wait = int(perf.get("skip_first", 0)), int(perf.get("wait", 0))
    warmup, active = int(perf.get("warmup", 0)), int(perf.get("active", 1))
    cycle = wait + warmup + active
    return {
        skip + k * cycle + wait + warmup + i
        for k in range(int(perf.get("repeat", 1)))
        for i in range(active)
    }


def _sibling(name: str, file: str) -> Any:
    """``file`` beside this file (``steplog.py``, ``profiler.py``), loaded by path once."""
    import importlib.util

    if name not in sys.modules:
        path = os.path.join(os.path.dirname(os.path.abspath(__file__)), file)
        spec = importlib.util.spec_from_file_location(name, path)
        if spec is None or spec.loader is None:
            raise ImportError(f"majob --perf: cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
    return sys.modules[name]


def _profiler_module() -> Any:
    """``profiler.py`` (torch's side), loaded once torch is there."""
    return _sibling("_majob_perf_profiler", "profiler.py")


def _steps(config: dict[str, Any]) -> Any:
    """The process's step recorder (``steplog.py``), saying its step time every
    ``step_line_seconds``."""
    steplog = _sibling("_majob_perf_steplog", "steplog.py")
    seconds = config.get("step_line_seconds", steplog.DEFAULT_LINE_SECONDS)
    return steplog.Steps(float(seconds))


class _State:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.mode: str = config.get("mode", "steps")
        self.perf: dict[str, Any] = config.get("perf", {})
        self.profiled = profiled_steps(self.perf) if self.mode == "profile" else set()
        self.steps = _steps(config)
        self.pid = os.getpid()
        self.home: str | None = None  # this process's folder, made at its first record
        self.rank = 0
        self.profiler: Any = None
        self.device = "cpu"
        self.torch_version = ""
        self.windows = 0  # time windows counted (a script that steps no optimizer)
        self.first_call: float | None = None
        self.forward_hook: Any = None
        self.pending: list[int] = []  # recorded steps (or windows) not exported yet
        self.cycles = 0  # traces exported
        self.done = False  # every cycle exported, or the profile stopped
        self.failed = False  # an uncaught exception was seen: the stop's reason
        self.stop_reason: str | None = None  # set while stop() exports what was recorded

    def worker(self) -> str:
        return f"worker-{_node()}-rank{self.rank}"

    def folder(self) -> str:
        """This process's folder, made when it first writes (the rank is known by then)."""
        if self.home is None:
            self.rank = _rank()
            if self.mode == "profile":
                self.home = self.new_folder()
            else:
                self.home = os.path.join(self.config["steps_dir"], self.worker())
            os.makedirs(self.home, exist_ok=True)
        return self.home

    def new_folder(self) -> str:
        """A profile folder named as torch_npu names them: ``<worker>_<ts>_ascend_pt``."""
        name = f"{self.worker()}_{_stamp()}_ascend_pt"
        return os.path.join(self.config["profiling_dir"], name)

    # -- torch hooks -----------------------------------------------------------------------

    def torch_ready(self, torch: Any) -> None:
        """``import torch`` is done: hook its optimizers and modules, arm the profiler."""
        self.pid = os.getpid()
        self.torch_version = str(getattr(torch, "__version__", ""))
        import importlib

        optimizer = importlib.import_module("torch.optim.optimizer")
        optimizer.register_optimizer_step_post_hook(self._stepped)
        module = importlib.import_module("torch.nn.modules.module")
        self.forward_hook = module.register_module_forward_pre_hook(self._called)
        if self.mode != "profile":
            return
        profiler = _profiler_module()
        self.profiler, self.device = profiler.arm(torch, self.perf, self._trace_ready)
        self.profiler.start()
        atexit.register(self.stop)
        profiler.on_sigterm(self)
        profiler.on_exception(self)

    def _called(self, module: Any, args: Any) -> None:
        if os.getpid() != self.pid:  # a forked DataLoader worker: not this process's steps
            return
        now = time.monotonic()
        if self.first_call is None:
            self.first_call = now
            self.steps.begin()
            if self.mode != "profile":
                self._drop_forward_hook()  # the steps alone need only the first call
            return
        window = float(self.perf.get("window_seconds", 10.0))
        if self.steps.index == 0 and now - self.first_call >= window * (self.windows + 1):
            self.windows += 1  # no optimizer step yet: a time window is the step
            self._advance(self.windows - 1)

    def _stepped(self, optimizer: Any, args: Any, kwargs: Any) -> None:
        if os.getpid() != self.pid:
            return
        index = self.steps.index
        profiled = self.profiler is not None and not self.windows and index in self.profiled
        path = os.path.join(self.folder(), STEPS_FILE.format(rank=self.rank))
        self.steps.end(path, profiled and not self.done, self.rank)
        if self.windows:
            return  # the profile runs on time windows, begun before this first step
        if index == 0:
            self._drop_forward_hook()  # steps are seen: no time windows
        self._advance(index)

    def _advance(self, index: int) -> None:
        """Step (or window) ``index`` is over: the profiler moves on; stopped once done."""
        if self.profiler is None or self.done:
            return
        if index in self.profiled:
            self.pending.append(index)
        self.profiler.step()  # at a cycle's last step, torch calls _trace_ready
        if self.cycles >= int(self.perf.get("repeat", 1)):
            self.done = True
            self.profiler.stop()

    def _drop_forward_hook(self) -> None:
        if self.forward_hook is not None:
            self.forward_hook.remove()
            self.forward_hook = None

    # -- the profile's end -----------------------------------------------------------------

    def _trace_ready(self, prof: Any) -> None:
        """A cycle is recorded (or the profile stopped while recording): export it."""
        recorded, self.pending = self.pending, []
        if self.stop_reason is not None:  # the step under way when it stopped: partly there
            current = self.windows if self.windows else self.steps.index
            if current in self.profiled and current not in recorded:
                recorded.append(current)
        first = self.folder() if self.cycles == 0 else None
        folder = _profiler_module().export(prof, self, first)
        if first is not None and folder != first:  # torch_npu made its own: the steps go there
            self._move_home(folder)
        self.cycles += 1
        complete = self.stop_reason is None
        reason = self.stop_reason or ("window" if self.windows else "exit")
        self.write_info(folder, recorded, complete, reason)

    def _move_home(self, folder: str) -> None:
        """The step file moves into the folder torch_npu's handler made, and goes on there."""
        name = STEPS_FILE.format(rank=self.rank)
        if self.steps.out is not None:
            self.steps.out.close()
            self.steps.out = None
        old = self.folder()
        if os.path.exists(os.path.join(old, name)):
            os.replace(os.path.join(old, name), os.path.join(folder, name))
        with contextlib.suppress(OSError):
            os.rmdir(old)
        self.home = folder

    def write_info(self, folder: str, steps: list[int], complete: bool, reason: str) -> None:
        info = {
            "rank_id": self.rank,
            "node": _node(),
            "device": self.device,
            "torch": self.torch_version,
            "config": self.perf,
            "steps": [steps[0], steps[-1]] if steps else [],
            "complete": complete,
            "reason": reason,
        }
        path = os.path.join(folder, INFO_FILE.format(rank=self.rank))
        try:  # torch_npu writes a file of this name (on an NPU): its keys are kept, ours added
            with open(path, encoding="utf-8") as existing:
                written = json.load(existing)
        except (OSError, ValueError):
            written = {}
        merged = {**written, **info} if isinstance(written, dict) else info
        with open(path + ".tmp", "w", encoding="utf-8") as out:
            json.dump(merged, out, indent=2)
        os.replace(path + ".tmp", path)

    def stop(self, reason: str | None = None) -> None:
        """Exit, an exception or a signal: stop the profiler (a cycle being recorded is exported,
        marked partial); a process that recorded nothing writes nothing."""
        if self.profiler is None or self.done or os.getpid() != self.pid:
            return
        self.done = True
        self.stop_reason = reason or ("exception" if self.failed else "exit")
        try:
            self.profiler.stop()  # torch: RECORD -> None exports (our _trace_ready)
        except Exception as error:  # the run's own outcome matters more than the profile's
            sys.stderr.write(f"[majob] --perf: the profiler did not stop cleanly: {error}\n")
        if self.cycles == 0 and (self.steps.index or self.windows):
            self.write_info(self.folder(), [], False, self.stop_reason)


class _TorchWatch:
    """Meta-path finder that calls ``state.torch_ready`` once ``import torch`` is done."""

    def __init__(self, state: _State) -> None:
        self.state = state
        self.seen = False

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch" or self.seen:
            return None
        self.seen = True
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module
        state = self.state

        def exec_and_hook(module: Any) -> None:
            exec_module(module)
            try:
                state.torch_ready(module)
            except Exception as error:  # the script runs on, unprofiled, and is told so
                sys.stderr.write(f"[majob] --perf: no step times or profile: {error!r}\n")

        loader.exec_module = exec_and_hook
        return spec


def install() -> None:
    """Called by the run's ``sitecustomize`` when ``MAJOB_PERF`` is set."""
    config_file = os.environ.get(CONFIG_ENV)
    if not config_file:
        return
    with open(config_file, encoding="utf-8") as handle:
        config = json.load(handle)
    sys.meta_path.insert(0, _TorchWatch(_State(config)))


# -- the cloud: run as the job's boot file -----------------------------------------------------
# `majob submit --perf` uploads this file with the code (``majob_perf/bootstrap.py``, with
# ``steplog.py``, ``profiler.py`` and ``settings.json`` beside it) and makes it the boot file:
# ModelArts runs ``python <code>/majob_perf/bootstrap.py ARGS``, which installs the hooks and runs
# the user's boot file (``MAJOB_PERF_BOOT``, relative to the code dir) as ``__main__``.

BOOT_ENV = "MAJOB_PERF_BOOT"


def launch() -> None:
    import runpy
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "settings.json"), encoding="utf-8") as handle:
        settings = json.load(handle)
    for key in ("profiling_dir", "steps_dir"):  # container paths with their variables
        if key in settings:
            settings[key] = os.path.expandvars(settings[key])
    settings_file = os.path.join(tempfile.mkdtemp(prefix="majob-perf-"), "settings.json")
    with open(settings_file, "w", encoding="utf-8") as out:
        json.dump(settings, out)
    os.environ[CONFIG_ENV] = settings_file
    install()
    boot = os.path.join(os.path.dirname(here), os.environ[BOOT_ENV])
    sys.argv[0] = boot
    sys.path[0] = os.path.dirname(boot)
    runpy.run_path(boot, run_name="__main__")


if __name__ == "__main__":
    launch()

"""The node half of ``--dump``: loaded by the run's ``sitecustomize`` when ``MAJOB_PRECISION``
names a configuration file. It dumps with msprobe without any edit to the user's script.

Standard library only at import, and no import of ``majob`` (the node may run another
interpreter). Nothing happens until torch is imported; then, through a meta-path finder that
wraps ``torch.optim.optimizer`` once it is loaded:

- the first ``torch.nn.Module`` built (torch is whole by then) seeds every generator with
  msprobe's ``seed_all(seed, mode=True)`` (deterministic algorithms), before any weight exists;
  with ``precision.deterministic``, ``rm_dropout=True`` as well (dropout's ``p`` set to 0);
- the first ``Module`` called (the outermost one: the model) creates msprobe's
  ``PrecisionDebugger`` and ``start(model)`` s it, before that forward runs;
- torch's global optimizer step post hook (``register_optimizer_step_post_hook``) ends a step:
  ``stop()``, the step's gradients with ``--dump grad`` (``gradprobe.py``, msprobe's hooks
  off), ``step()``, and ``start(model)`` again while dumped steps remain;
- ``Tensor.backward`` on a one-element tensor records it as that step's loss
  (``loss-rank<R>.jsonl``), so ``majob compare`` has a loss curve with no print in the script.

What this cannot see: work done before the first module call, a training loop without a
``torch.optim`` optimizer (steps never advance), and processes started with ``fork`` after
the debugger started are fine, but ``spawn``-ed workers of another interpreter are not dumped.
"""

from __future__ import annotations

import atexit
import importlib.machinery
import json
import os
import runpy
import sys
import time

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CONFIG_ENV = "MAJOB_PRECISION"  # majob's settings: seed, steps, level, msprobe's config file


class _State:
    def __init__(self, config: dict[str, Any]) -> None:
        self.config = config
        self.dump_dir: str = config["dump_path"]
        self.steps: list[int] = list(config["step"])
        self.last_step = max(self.steps) if self.steps else 0
        self.step = 0
        self.seeded = False
        self.debugger: Any = None
        self.model: Any = None
        self.running = False
        self.busy = False
        self.loss_file: Any = None
        self.grad: Any = None  # gradprobe.GradRecorder with --dump grad

    # -- torch hooks -----------------------------------------------------------------------

    def seed(self) -> None:
        if self.seeded or self.busy:
            return
        self.seeded = True
        self.busy = True
        try:
            seed_all = _msprobe(self.dump_dir).seed_all
            rm_dropout = bool(self.config.get("deterministic", False))
            seed_all(seed=int(self.config["seed"]), mode=True, rm_dropout=rm_dropout)
        finally:
            self.busy = False

    def begin(self, model: Any, args: Any = (), kwargs: Any = None) -> None:
        """The first module call: create the debugger and start it on ``model``."""
        if self.debugger is not None or self.busy:
            return
        self.busy = True
        try:
            self.model = model
            probe = _msprobe(self.dump_dir)
            self.debugger = probe.PrecisionDebugger(config_path=self.config["msprobe_config"])
            pack = os.path.join(os.path.dirname(os.path.abspath(__file__)), "config_pack.py")
            if os.path.isfile(pack):  # what went in (config_pack.py), before the dump starts
                runpy.run_path(pack)["collect"](self.config, model, args, kwargs or {}, _rank())
            if self.config.get("grad") is not None:  # --dump grad (gradprobe.py)
                grad = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gradprobe.py")
                recorder = runpy.run_path(grad)["GradRecorder"]
                self.grad = recorder(self.config["grad"], self.dump_dir, _rank())
                self.grad.watch(model)
            self._start()
            atexit.register(self.finish)
        finally:
            self.busy = False

    def _start(self) -> None:
        level = self.config.get("level", "L1")
        if level == "L1":
            self.debugger.start()  # L1 hooks torch's APIs: no model needed
        else:
            self.debugger.start(model=self.model)
        self.running = True

    def optimizer_stepped(self) -> None:
        if self.debugger is None:
            self.step += 1
            return
        if self.running:
            self.debugger.stop()
            self.running = False
        if self.grad is not None and self.grad.wants(self.step):
            self.busy = True  # its reductions are not the script's work
            try:
                self.grad.record(self.step)
            finally:
                self.busy = False
        self.debugger.step()
        self.step += 1
        if self.step <= self.last_step:
            self._start()

    def backward(self, tensor: Any) -> None:
        try:
            if tensor.numel() != 1:
                return
            value = float(tensor.detach().reshape(()).item())
        except Exception:  # a loss we cannot read is not worth breaking the script
            return
        if self.loss_file is None:
            os.makedirs(self.dump_dir, exist_ok=True)
            name = os.path.join(self.dump_dir, f"loss-rank{_rank()}.jsonl")
            self.loss_file = open(name, "a", encoding="utf-8")  # noqa: SIM115 (kept open)
            atexit.register(self.loss_file.close)
        self.loss_file.write(json.dumps({"step": self.step, "loss": value}) + "\n")
        self.loss_file.flush()

    def finish(self) -> None:
        if self.running:
            self.debugger.stop()
            self.running = False


def _msprobe(dump_dir: str) -> Any:
    """``msprobe.pytorch`` with its messages going to ``dump_dir`` (``_log_to_file``), or one
    line and exit 2 when this interpreter does not have it (a dump run without a dump would only
    waste the time it trains)."""
    try:
        from msprobe.core.common.log import BaseLogger

        _log_to_file(BaseLogger, dump_dir)  # before msprobe.pytorch, which logs as it loads
        import msprobe.pytorch as probe
    except ImportError:
        sys.stderr.write(
            f"majob --dump: msprobe is not installed for {sys.executable}; "
            "install it there: pip install mindstudio-probe\n"
        )
        sys.stderr.flush()
        os._exit(2)  # SystemExit could be caught by the script's own handlers
    return probe


LOG_NAME = "msprobe-rank{rank}.log"  # in the dump dir; majob run counts its warnings


def _log_to_file(logger_class: Any, dump_dir: str) -> None:
    """msprobe prints about ten INFO lines per dumped step into the script's output (where the
    dump goes, which hooks it mounted...): every message goes to ``msprobe-rank<R>.log`` in the
    dump dir instead, and only warnings and errors are printed as well. Patched on the class,
    once, so every msprobe logger (the PyTorch one is a subclass) writes there."""
    if getattr(logger_class, "_majob_log_file", None):
        return
    path = os.path.join(dump_dir, LOG_NAME.format(rank=_rank()))
    printed = logger_class._print_log

    def _print_log(
        self: Any, level: str, msg: str, end: str = "\n", show_rank: bool = True
    ) -> None:
        rank = self.get_rank() if show_rank else None
        where = f" [rank {rank}]" if rank is not None else ""
        stamp = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime())
        os.makedirs(dump_dir, exist_ok=True)
        with open(path, "a", encoding="utf-8") as log:
            log.write(f"{stamp} ({os.getpid()}){where} [{level}] {msg}\n")
        if level not in ("DEBUG", "INFO"):
            printed(self, level, msg, end=end, show_rank=show_rank)

    logger_class._print_log = _print_log
    logger_class._majob_log_file = path


def _rank() -> str:
    for name in ("RANK", "VC_TASK_INDEX"):
        value = os.environ.get(name)
        if value and value.isdigit():
            return value
    return "0"


def _patch_torch(state: _State, optimizer_module: Any) -> None:
    """Called once ``torch.optim.optimizer`` is loaded (``torch.nn`` already is)."""
    module_class = sys.modules["torch.nn.modules.module"].Module
    original_init = module_class.__init__
    original_call = module_class.__call__

    def __init__(self: Any, *args: Any, **kwargs: Any) -> None:
        module_class.__init__ = original_init  # once: seeding needs torch whole, which it is now
        state.seed()
        original_init(self, *args, **kwargs)

    def __call__(self: Any, *args: Any, **kwargs: Any) -> Any:
        if not state.busy:
            module_class.__call__ = original_call  # once: the outermost module is the model
            state.begin(self, args, kwargs)
        return original_call(self, *args, **kwargs)

    module_class.__init__ = __init__
    module_class.__call__ = __call__
    optimizer_module.register_optimizer_step_post_hook(
        lambda optimizer, args, kwargs: state.optimizer_stepped()
    )
    tensor_class = sys.modules["torch._tensor"].Tensor
    original_backward = tensor_class.backward

    def backward(self: Any, *args: Any, **kwargs: Any) -> Any:
        state.backward(self)
        return original_backward(self, *args, **kwargs)

    tensor_class.backward = backward


class _TorchWatch:
    """Meta-path finder that patches torch once ``torch.optim.optimizer`` is loaded."""

    def __init__(self, state: _State) -> None:
        self.state = state

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch.optim.optimizer":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module
        state = self.state

        def exec_and_patch(module: Any) -> None:
            exec_module(module)
            _patch_torch(state, module)

        loader.exec_module = exec_and_patch
        return spec


def install() -> None:
    """Called by the guard's ``sitecustomize`` when ``MAJOB_PRECISION`` is set."""
    config_file = os.environ.get(CONFIG_ENV)
    if not config_file:
        return
    with open(config_file, encoding="utf-8") as handle:
        config = json.load(handle)
    sys.meta_path.insert(0, _TorchWatch(_State(config)))


# -- the cloud: run as the job's boot file -----------------------------------------------------
# `majob submit --dump` uploads this file with the code (``majob_precision/bootstrap.py``), with
# ``settings.json`` beside it, and makes it the boot file: ModelArts then runs
# ``python <code>/majob_precision/bootstrap.py ARGS``, which installs the hooks and runs the
# user's boot file (``MAJOB_PRECISION_BOOT``, relative to the code dir) as ``__main__``.

BOOT_ENV = "MAJOB_PRECISION_BOOT"


def launch() -> None:
    import runpy
    import tempfile

    here = os.path.dirname(os.path.abspath(__file__))
    code_dir = os.path.dirname(here)
    with open(os.path.join(here, "settings.json"), encoding="utf-8") as handle:
        settings = json.load(handle)
    # The dump dir is a container path written with its variables (MA_MOUNT_PATH...).
    dump_path = os.path.expandvars(settings["dump_path"])
    scratch = tempfile.mkdtemp(prefix="majob-precision-")
    probe = dict(settings.pop("msprobe"), dump_path=dump_path)
    spec = settings.pop("spec", None)
    if spec is not None:  # run-spec.json (majob/precision/specs.py), for `majob compare`
        os.makedirs(dump_path, exist_ok=True)
        with open(os.path.join(dump_path, "run-spec.json"), "w", encoding="utf-8") as out:
            json.dump(spec, out, indent=2, sort_keys=True)
    probe_file = os.path.join(scratch, "msprobe-config.json")
    with open(probe_file, "w", encoding="utf-8") as out:
        json.dump(probe, out)
    settings.update(dump_path=dump_path, msprobe_config=probe_file)
    settings_file = os.path.join(scratch, "settings.json")
    with open(settings_file, "w", encoding="utf-8") as out:
        json.dump(settings, out)
    os.environ[CONFIG_ENV] = settings_file
    install()
    boot = os.path.join(code_dir, os.environ[BOOT_ENV])
    sys.argv[0] = boot
    sys.path[0] = os.path.dirname(boot)
    runpy.run_path(boot, run_name="__main__")


if __name__ == "__main__":
    launch()

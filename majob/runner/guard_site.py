"""The in-process half of the guard, loaded by the run's ``sitecustomize.py`` (and nowhere else).

Standard library only, and no import of ``majob``: the nodes may run another interpreter (a
project venv without majob); the run's ``sitecustomize.py`` loads this file by its path, so its
bytecode is cached next to it. ``guard.py`` writes the configuration (a JSON file named by
``MAJOB_GUARD``) and reads back the findings each process appends to ``events-<pid>.jsonl``.
Every process of a run pays for this file, so it imports little (no typing, no tempfile).

An audit hook (``sys.addaudithook``) sees every ``open``; ``torch.save`` to a file name writes from
C++ without one, so its writer class is wrapped when ``torch.serialization`` is imported.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import json
import os
import sys
import threading

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import FrameType
    from typing import Any

_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_APPEND | os.O_TRUNC
_TORCH_WRITE_EVENT = "majob.guard.torch_save"


def _under(path: str, roots: list[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _is_write(mode: object, flags: object) -> bool:
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return isinstance(flags, int) and bool(flags & _WRITE_FLAGS)


class _Guard:
    def __init__(self, config: dict[str, Any]) -> None:
        self.code_copy = config["code_copy"].rstrip("/") + "/"
        self.code_origin = config["code_origin"].rstrip("/") + "/"
        self.write_ok = config["write_ok"]
        self.read_only = config.get("read_only", [])  # read-only volumes' stand-ins
        self.container = [config["container_root"]]
        self.temp = config["temp"]
        # Whatever the interpreter and its libraries read is there in the container's image too.
        self.read_ok = sorted(
            {*config["read_ok"], sys.prefix, sys.exec_prefix, sys.base_prefix}
            | {os.path.abspath(p) for p in sys.path if p and os.path.isdir(p)}
        )
        self.read_watch = config["read_watch"]
        self.home = config["home"].rstrip("/") + "/"
        self.events = os.path.join(config["events_dir"], f"events-{os.getpid()}.jsonl")
        self.node = os.environ.get("VC_TASK_INDEX", "?")
        self.seen: set[tuple[str, str, str]] = set()
        self.local = threading.local()

    def hook(self, event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            path, mode, flags = args
            write = _is_write(mode, flags)
        elif event == _TORCH_WRITE_EVENT:
            path, write = args[0], True
        else:
            return
        if isinstance(path, int) or getattr(self.local, "busy", False):
            return
        self.local.busy = True
        try:
            self.check(os.path.abspath(os.fsdecode(path)), write)
        except Exception:  # the guard must never break the user's script
            pass
        finally:
            self.local.busy = False

    def check(self, path: str, write: bool) -> None:
        if path.startswith(self.home) and path[len(self.home) :].startswith("."):
            return  # tool settings and caches (~/.cache, ~/.config): not the script's data
        if write:
            if path.endswith(".pyc") or path.startswith(("/dev/", "/proc/")):
                return
            if _under(path, self.read_only):  # the container's mount refuses it (EROFS)
                self.record("write", path)
                return
            if _under(path, self.write_ok):
                return
            # The temp dir is scratch space, unless the run itself lives there (as in tests).
            if _under(path, self.container) or not _under(path, self.temp):
                self.record("write", path)
        elif _under(path, self.read_watch) and not _under(path, self.read_ok):
            self.record("read", path)

    def record(self, kind: str, path: str) -> None:
        where = self.user_frame()
        key = (kind, path, where)
        if key in self.seen:
            return
        self.seen.add(key)
        line = json.dumps({"kind": kind, "path": path, "where": where, "node": self.node})
        with open(self.events, "a", encoding="utf-8") as out:
            out.write(line + "\n")

    def user_frame(self) -> str:
        """``file:line`` of the innermost frame in the code copy, named by its original path."""
        frame: FrameType | None = sys._getframe(1)
        while frame is not None:
            filename = frame.f_code.co_filename
            if filename.startswith(self.code_copy):
                original = self.code_origin + filename[len(self.code_copy) :]
                return f"{original}:{frame.f_lineno}"
            frame = frame.f_back
        return ""


class _TorchSaveWatch:
    """Meta-path finder that wraps ``torch.serialization``'s file writer once it is loaded."""

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch.serialization":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_and_wrap(module: Any) -> None:
            exec_module(module)
            writer = getattr(module, "_open_zipfile_writer_file", None)
            if writer is not None:
                original_init = writer.__init__

                def __init__(self: Any, name: Any, *args: Any, **kwargs: Any) -> None:
                    sys.audit(_TORCH_WRITE_EVENT, name)
                    original_init(self, name, *args, **kwargs)

                writer.__init__ = __init__

        loader.exec_module = exec_and_wrap
        return spec


class _LeaveTogetherWatch:
    """Meta-path finder that makes ``torch.distributed.destroy_process_group()`` of the default
    group wait for every rank first (a monitored barrier, 60 s at most) once it is loaded.

    The local stage runs on gloo, whose teardown is not safe when ranks leave one by one: rank 0
    hosts the rendezvous store, and a rank still destroying its group when rank 0 has exited, or
    exiting while a gloo thread still frees the last collective's tensors, dies of SIGABRT
    ("terminate called without an active exception"). Scripts written like the PyTorch tutorials
    call ``destroy_process_group()`` with no barrier, so the run would fail at random after
    training passed. Waiting changes nothing a script can observe besides that.
    """

    def find_spec(self, name: str, path: Any, target: Any = None) -> Any:
        if name != "torch.distributed":
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        loader = getattr(spec, "loader", None)
        if spec is None or loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_and_wrap(module: Any) -> None:
            exec_module(module)
            original = getattr(module, "destroy_process_group", None)
            if original is None or not module.is_available():
                return

            def destroy_process_group(group: Any = None) -> None:
                if group is None and module.is_initialized() and module.get_world_size() > 1:
                    import datetime

                    try:
                        if module.get_backend() == "gloo":
                            module.monitored_barrier(timeout=datetime.timedelta(seconds=60))
                        else:
                            module.barrier()
                    except Exception as error:  # a rank is gone: leave anyway, and say so
                        sys.stderr.write(f"[majob] leaving the process group alone: {error}\n")
                original(group)

            module.destroy_process_group = destroy_process_group
            c10d = sys.modules.get("torch.distributed.distributed_c10d")
            if c10d is not None:
                setattr(c10d, "destroy_process_group", destroy_process_group)  # noqa: B010

        loader.exec_module = exec_and_wrap
        return spec


def _chain_next_sitecustomize(site_file: str) -> None:
    """Run the ``sitecustomize`` the run's one shadows (Debian's, a venv's), if there is one."""
    here = os.path.dirname(os.path.abspath(site_file))
    rest = [p for p in sys.path if os.path.abspath(p or ".") != here]
    found = importlib.machinery.PathFinder.find_spec("sitecustomize", rest)
    if found is None or not found.origin or os.path.dirname(found.origin) == here:
        return
    chained = importlib.util.spec_from_file_location("_majob_chained_sitecustomize", found.origin)
    if chained is not None and chained.loader is not None:
        chained.loader.exec_module(importlib.util.module_from_spec(chained))


def install(site_file: str) -> None:
    """Called by the run's ``sitecustomize.py`` (``site_file``) at interpreter start-up."""
    config_file = os.environ.get("MAJOB_GUARD")
    if config_file:
        with open(config_file, encoding="utf-8") as handle:
            guard = _Guard(json.load(handle))
        sys.addaudithook(guard.hook)
        sys.meta_path.insert(0, _TorchSaveWatch())
        sys.meta_path.insert(0, _LeaveTogetherWatch())
    # `--dump`: majob/precision/bootstrap.py; step times and `--perf`: majob/perf/bootstrap.py;
    # each loaded by path like this file.
    for variable, name in (
        ("MAJOB_PRECISION_BOOTSTRAP", "_majob_precision_bootstrap"),
        ("MAJOB_PERF_BOOTSTRAP", "_majob_perf_bootstrap"),
    ):
        bootstrap = os.environ.get(variable)
        if bootstrap:
            spec = importlib.util.spec_from_file_location(name, bootstrap)
            if spec is not None and spec.loader is not None:
                module = importlib.util.module_from_spec(spec)
                spec.loader.exec_module(module)
                module.install()
    _chain_next_sitecustomize(site_file)

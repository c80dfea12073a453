"""What a node takes from this machine: the interpreter, a free port, and the environment
without what a training container would not have.

Spec-free: the local stage and the emulator's executor both start their nodes from here.
"""

from __future__ import annotations

import os
import shutil
import socket
import sys
from collections.abc import Collection, Mapping, Sequence

from majob.errors import RunnerError

# Set by launchers such as torchrun; the container has none of them, and a stale one would
# mislead a script that checks them before its --rank/--world_size arguments.
LAUNCHER_ENV = (
    "RANK",
    "LOCAL_RANK",
    "WORLD_SIZE",
    "LOCAL_WORLD_SIZE",
    "GROUP_RANK",
    "MASTER_ADDR",
    "MASTER_PORT",
    "TORCHELASTIC_RUN_ID",
)


def resolve_interpreter(python: str | None) -> str:
    """The interpreter the nodes run: ``python`` (a path or a name on PATH), else this one."""
    if python is None:
        return sys.executable
    found = shutil.which(python)
    if found is None:
        raise RunnerError(
            f"interpreter {python!r} not found or not executable",
            hint="pass --python with the path of a python executable, e.g. .venv/bin/python",
        )
    return os.path.abspath(found)


def free_port() -> int:
    """A TCP port nobody listens on now (the OS picks it; node 0 binds it soon after)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def host_environment(drop_prefixes: tuple[str, ...], drop: Collection[str] = ()) -> dict[str, str]:
    """This process's environment without the launcher variables, the names in ``drop`` and
    those starting with one of ``drop_prefixes`` (this machine's credentials and settings: a
    container has none of them, and a node's logs must never hold a secret)."""
    return {
        name: value
        for name, value in os.environ.items()
        if name not in LAUNCHER_ENV and name not in drop and not name.startswith(drop_prefixes)
    }


THREADS_ENV = "OMP_NUM_THREADS"


def threads_per_node(env: Mapping[str, str], nodes: int) -> str | None:
    """The ``OMP_NUM_THREADS`` each of ``nodes`` local nodes gets when nobody set one: this
    machine's usable CPUs shared out (at least one), as torchrun does for several processes.
    On ModelArts each node has its machine; here they share one, and N nodes each starting
    a thread per CPU oversubscribe it: OpenMP's barriers then wait on preempted threads (a
    64x64 matmul took 15 ms beside other work). None: one node, or the user chose."""
    if nodes < 2 or env.get(THREADS_ENV):
        return None
    return str(max(1, len(os.sched_getaffinity(0)) // nodes))


def threads_line(nodes: int, threads: str) -> str:
    return (
        f"{nodes} nodes share this machine's CPUs: {THREADS_ENV}={threads} each (as torchrun "
        f"sets it; put {THREADS_ENV} in the spec's env or this shell to choose)"
    )


def node_environment(
    base: Mapping[str, str],
    container: Mapping[str, str],
    *,
    python: str,
    first_on_path: Sequence[str] = (),
    nodes: int = 1,
) -> tuple[dict[str, str], str | None]:
    """``base`` with the container's variables on top, ``first_on_path`` ahead of ``base``'s
    ``PYTHONPATH``, the interpreter's dir first on ``PATH`` (its ``pip``-installed scripts) and,
    for several nodes on this machine, their share of its CPUs (``threads_per_node``): the
    environment, and that share when this set it (None: one node, or the user chose)."""
    env = {**base, **container}
    threads = threads_per_node(env, nodes)
    if threads is not None:
        env[THREADS_ENV] = threads
    python_path = (*first_on_path, base.get("PYTHONPATH"))
    env["PYTHONPATH"] = os.pathsep.join(p for p in python_path if p)
    env["PATH"] = os.pathsep.join((os.path.dirname(python), base.get("PATH", "")))
    return env, threads

"""A job's training container as the fake lays it out and starts it: paths, environment,
arguments, one command per node (reference modelarts.md §3; the container contract of
docs/DESIGN). The container's ``/home/ma-user`` is ``<state>/modelarts/jobs/<id>/ma-user``:

::

    ma-user/                                  MA_HOME            (/home/ma-user)
    └── modelarts/                            MA_MOUNT_PATH
        ├── user-job-dir/                     MA_JOB_DIR (or the body's local_code_dir)
        │   └── <last dir of code_dir>/       WORKSPACE, the downloaded code, the working dir
        │                                     (no code dir: MA_JOB_DIR itself)
        ├── inputs/<name>_0/                  an input's download: --<name>=<dir> (or the file)
        ├── outputs/<name>_0/                 --<name>=<dir>, uploaded to the output's OBS path
        └── log/                              MA_LOG_DIR
    home/                                     the rest of /home, for the body's own paths

A body's ``local_code_dir``, ``working_dir`` and channel ``local_dir`` (container paths under
``/home``, ``placement.py``) replace the defaults above.

Each node is a process on 127.0.0.1 (ModelArts gives each its own container; here they share
the tree) with the variables ModelArts sets, the body's ``environments``, ``--<name>=<value>`` per
channel passed as a parameter and per hyperparameter, and for a preset engine (in its own image)
on more than one node ``--init_method=tcp://<worker-0>:<port> --rank=<i> --world_size=<n>``. A
custom image's command runs through ``/bin/sh -c`` with the same arguments appended.
"""

from __future__ import annotations

import shlex
import shutil
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath

from majob.container import CACHE, mounted
from majob.emulator.modelarts.plan import ChannelPlan, JobPlan
from majob.runner.nodecache import node_cache_dir
from majob.runner.nodes import TASK_NAME, NodeCommand
from majob.runner.shellcmd import container_command

HOME = PurePosixPath("/home/ma-user")  # MA_HOME
MOUNT = HOME / "modelarts"  # MA_MOUNT_PATH
HOST = "127.0.0.1"
# The container variables that hold a path: a custom command may use them unquoted.
PATH_VARIABLES = ("MA_HOME", "MA_MOUNT_PATH", "MA_JOB_DIR", "MA_LOG_DIR", "WORKSPACE")


@dataclass(frozen=True)
class JobContainer:
    """Where each container path of one job is; ``root`` stands for ``/home/ma-user`` (and its
    sibling ``home/`` for the rest of ``/home``). ``job_dir`` holds the code (the body's
    ``local_code_dir``, else ``user-job-dir``); ``working_dir`` is where the nodes start."""

    root: Path
    code_dir_name: str | None  # None: the job has no code dir (a custom image's own code)
    inputs: Mapping[str, Path]
    outputs: Mapping[str, Path]
    job_dir: Path
    working_dir: Path
    mounts: Mapping[PurePosixPath, Path] = field(default_factory=dict)  # SFS volumes' folders

    @property
    def mount(self) -> Path:
        return self.root / "modelarts"

    @property
    def code_dir(self) -> Path:
        return self.job_dir / self.code_dir_name if self.code_dir_name else self.job_dir

    @property
    def log_dir(self) -> Path:
        return self.mount / "log"

    def local_value(self, value: str) -> str:
        """A variable's value that is a ``/home`` path or one on a volume, as the job's (else
        unchanged)."""
        on_volume = mounted(value, self.mounts)
        if on_volume is not None:
            return on_volume
        home = str(HOME.parent)
        if value == home or value.startswith(home + "/"):
            path = PurePosixPath(value)
            if ".." not in path.parts and path != HOME.parent:
                return str(on_disk(self.root, path))
        return value

    def channel_value(self, channel: ChannelPlan) -> str:
        """What the script receives for a channel: its ``<name>_0`` dir, or for an input that
        is one OBS file, that file inside the dir (where it is downloaded)."""
        if channel.name in self.outputs:
            return str(self.outputs[channel.name])
        directory = self.inputs[channel.name]
        return str(directory if channel.uri.is_dir else directory / channel.uri.name)


def on_disk(root: Path, path: PurePosixPath) -> Path:
    """Where container path ``path`` is, for a container whose ``/home/ma-user`` is ``root``:
    the rest of ``/home`` beside it, any other absolute path under ``root``'s
    ``rootfs`` sibling."""
    if path == HOME or path.is_relative_to(HOME):
        return root.joinpath(*path.relative_to(HOME).parts)
    if path.is_relative_to(HOME.parent):
        return root.parent.joinpath("home", *path.relative_to(HOME.parent).parts)
    return root.parent.joinpath("rootfs", *path.relative_to("/").parts)


def remove(root: Path) -> None:
    """Remove the container whose ``/home/ma-user`` is ``root``, with the siblings ``on_disk``
    puts its other paths under (a job-level restart gets a fresh one)."""
    for path in (root, root.parent / "home", root.parent / "rootfs", root.parent / "cache"):
        shutil.rmtree(path, ignore_errors=True)


def lay_out(
    plan: JobPlan, root: Path, mounts: Mapping[PurePosixPath, Path] | None = None
) -> JobContainer:
    """The job's container under ``root``: the code dir named after the last dir of the body's
    ``code_dir`` (under ``local_code_dir``), each input and output in its ``local_dir`` or
    ``<name>_0``, the nodes started in ``working_dir`` or the code dir; ``mounts``: each
    volume's mount point and its folder."""
    code = plan.code_dir
    # With no code dir (a custom image holding its code), the job dir itself stands for it.
    segments = [s for s in (code.bucket, *code.key.split("/")) if s] if code else [None]
    mount = root / "modelarts"

    def channel_dir(channel: ChannelPlan, kind: str) -> Path:
        if channel.local_dir is not None:
            return on_disk(root, channel.local_dir)
        return mount / kind / f"{channel.name}_0"

    placement = plan.placement
    code_parent = placement.local_code_dir
    job_dir = on_disk(root, code_parent) if code_parent else mount / "user-job-dir"
    working = placement.working_dir
    code_dir_name = segments[-1]
    code_dir = job_dir / code_dir_name if code_dir_name else job_dir
    return JobContainer(
        root=root,
        code_dir_name=code_dir_name,
        inputs={c.name: channel_dir(c, "inputs") for c in plan.inputs},
        outputs={c.name: channel_dir(c, "outputs") for c in plan.outputs},
        job_dir=job_dir,
        working_dir=on_disk(root, working) if working else code_dir,
        mounts=dict(mounts or {}),
    )


def node_commands(
    plan: JobPlan, container: JobContainer, *, job_id: str, python: str, port: int
) -> list[NodeCommand]:
    """One command per node; ``port`` is where node 0 listens for the others. Each node's
    ``/cache`` is a folder of its own (``majob.runner.nodecache``)."""
    commands = []
    for node in range(plan.nodes):
        cache = node_cache_dir(container.root.parent, node)
        cache.mkdir(parents=True, exist_ok=True)
        own = replace(container, mounts={**container.mounts, CACHE: cache})
        args = _arguments(plan, own, node, port)
        commands.append(
            NodeCommand(
                index=node,
                argv=_argv(plan, own, python, args),
                env=_environment(plan, own, node, job_id),
                cwd=own.working_dir,
            )
        )
    return commands


def _environment(plan: JobPlan, container: JobContainer, node: int, job_id: str) -> dict[str, str]:
    """The body's ``environments`` (they cannot override what ModelArts sets), then the
    platform's variables; host names are 127.0.0.1 (``<job>-worker-<i>.<job>`` would not resolve
    here)."""
    vj_name = f"modelarts-job-{job_id}"
    env = {name: container.local_value(value) for name, value in plan.environments.items()}
    env.update(
        {
            "MA_HOME": str(container.root),
            "MA_MOUNT_PATH": str(container.mount),
            "MA_JOB_DIR": str(container.job_dir),
            "MA_LOG_DIR": str(container.log_dir),
            "WORKSPACE": str(container.code_dir),
            "MA_CURRENT_IP": HOST,
            "MA_NUM_GPUS": str(plan.flavor.accelerators),
            "MA_TASK_NAME": TASK_NAME,
            "MA_NUM_HOSTS": str(plan.nodes),
            "VC_TASK_INDEX": str(node),
            "VC_WORKER_NUM": str(plan.nodes),
            "VC_WORKER_HOSTS": ",".join([HOST] * plan.nodes),
            "MA_VJ_NAME": vj_name,
            "MA_CURRENT_INSTANCE_NAME": f"{vj_name}-{TASK_NAME}-{node}",
            "PYTHONUNBUFFERED": "1",
        }
    )
    for channel in _channels(plan, "env"):
        env[channel.name] = container.channel_value(channel)
    return env


def _arguments(plan: JobPlan, container: JobContainer, node: int, port: int) -> list[str]:
    args = [f"--{c.name}={container.channel_value(c)}" for c in _channels(plan, "parameter")]
    args += [
        f"--{name}={mounted(value, container.mounts) or value}" for name, value in plan.parameters
    ]
    if plan.nodes > 1 and plan.launch.image_url is None:
        args += [
            f"--init_method=tcp://{HOST}:{port}",
            f"--rank={node}",
            f"--world_size={plan.nodes}",
        ]
    return args


def _argv(plan: JobPlan, container: JobContainer, python: str, args: list[str]) -> tuple[str, ...]:
    """A preset engine runs ``python <code>/<boot_file> args``; a custom image's command runs
    through ``/bin/sh -c`` (rewritten to this tree and interpreter) with the arguments appended,
    and nothing after them: the node's exit status is that of the command's last part."""
    command = plan.launch.command
    if not command:
        assert plan.launch.boot_file is not None  # read_launch refuses a body with neither
        return (python, str(container.code_dir / plan.launch.boot_file), *args)
    path_vars = (*PATH_VARIABLES, *(c.name for c in _channels(plan, "env")))
    line = container_command(command, root=container.root, python=python, path_vars=path_vars)
    return ("/bin/sh", "-c", " ".join([line, *(shlex.quote(a) for a in args)]))


def _channels(plan: JobPlan, access_method: str) -> list[ChannelPlan]:
    return [c for c in (*plan.inputs, *plan.outputs) if c.access_method == access_method]

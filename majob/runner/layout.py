"""The training container as the local stage reproduces it: paths, environment, arguments.

Pure: nothing here touches the disk or starts a process. ``local.py`` builds the tree and runs
the commands this module computes. The container's ``/home/ma-user`` becomes ``<run>/ma-user``:

::

    <root>                                   MA_HOME            (/home/ma-user)
    └── modelarts/                           MA_MOUNT_PATH      (/home/ma-user/modelarts)
        ├── user-job-dir/                    MA_JOB_DIR
        │   └── <code dir name>/             WORKSPACE, the code copy, the nodes' working dir
        ├── inputs/<name>_0/                 --<name>=<dir> (or the file inside it)
        ├── outputs/<name>_0/                --<name>=<dir>, copied to the output's ``local``
        └── log/                             MA_LOG_DIR
    <root>/../cache/worker-<i>/              node i's /cache (its local disk, a folder each)

All nodes share one tree (ModelArts gives each node its own container; locally they are N
processes on 127.0.0.1 and see the same files), except ``/cache``: a path on it in a
hyperparameter or an ``env`` value becomes the node's own folder, as in the emulator
(``nodecache.py``).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from majob import container
from majob.masking import MASK
from majob.runner.nodecache import node_cache_dir
from majob.runner.nodes import TASK_NAME, NodeCommand
from majob.runner.shellcmd import container_command
from majob.spec.fields import render_scalar
from majob.spec.models import Channel, JobSpec

CONTAINER_HOME = container.HOME
LOCAL_HOST = "127.0.0.1"


@dataclass(frozen=True)
class ContainerPaths:
    """Where each container path lives for one run (``root`` stands for ``/home/ma-user``)."""

    root: Path
    code_dir_name: str
    inputs: Mapping[str, Path] = field(default_factory=dict)
    outputs: Mapping[str, Path] = field(default_factory=dict)
    mounts: Mapping[PurePosixPath, Path] = field(default_factory=dict)  # volumes' stand-ins
    writable_mounts: tuple[Path, ...] = ()  # the stand-ins of volumes not mounted read-only
    caches: tuple[Path, ...] = ()  # each node's /cache: caches[i] is node i's

    def _local(self, path: PurePosixPath) -> Path:
        """The run's stand-in for a container path."""
        return self.root / path.relative_to(container.HOME)

    def node_mounts(self, node: int | None) -> Mapping[PurePosixPath, Path]:
        """The volumes' stand-ins and, for ``node``, its /cache folder (container path ->
        folder)."""
        if node is None or node >= len(self.caches):
            return self.mounts
        return {**self.mounts, container.CACHE: self.caches[node]}

    def local_value(self, value: str, node: int | None = None) -> str:
        """An env value that is a ``/home/ma-user`` path, a path on a volume or (for ``node``)
        on ``/cache``, as the run's path (else unchanged): the spec may name a container path
        the way the container's own variables do."""
        on_volume = container.mounted(value, self.node_mounts(node))
        if on_volume is not None:
            return on_volume
        home = str(container.HOME)
        if value == home or value.startswith(home + "/"):
            return str(self.root) + value[len(home) :]
        return value

    @property
    def mount(self) -> Path:
        return self._local(container.MOUNT)

    @property
    def job_dir(self) -> Path:
        return self._local(container.JOB_DIR)

    @property
    def code_dir(self) -> Path:
        return self.job_dir / self.code_dir_name

    @property
    def log_dir(self) -> Path:
        return self._local(container.LOG_DIR)


def container_paths(spec: JobSpec, root: Path) -> ContainerPaths:
    """The run's tree under ``root``: one ``<name>_0`` dir per input and output channel, and a
    ``/cache`` folder per node beside ``root``."""
    mount = root / "modelarts"
    return ContainerPaths(
        root=root,
        code_dir_name=spec.code_dir_name(),
        inputs={c.name: mount / "inputs" / f"{c.name}_0" for c in spec.inputs},
        outputs={c.name: mount / "outputs" / f"{c.name}_0" for c in spec.outputs},
        mounts={v.mount_path: Path(v.local) for v in spec.volumes if v.local is not None},
        writable_mounts=tuple(
            Path(v.local) for v in spec.volumes if v.local is not None and not v.read_only
        ),
        caches=tuple(node_cache_dir(root.parent, i) for i in range(spec.resources.nodes)),
    )


def job_name(run_id: str) -> str:
    """``MA_VJ_NAME``: ModelArts uses ``modelarts-job-<uuid>``; the run id stands for the uuid."""
    return f"modelarts-job-{run_id}"


def node_env(
    spec: JobSpec,
    paths: ContainerPaths,
    *,
    node: int,
    nodes: int,
    run_id: str,
) -> dict[str, str]:
    """The variables ModelArts sets in the container of ``node`` (0-based) of ``nodes``, plus the
    spec's ``env`` (which cannot override an ``MA_`` variable: the spec model forbids that prefix;
    a value that is a ``/home/ma-user`` path becomes the run's path).

    Host names are ``127.0.0.1`` (the platform's ``<job>-worker-<i>.<job>`` names would not
    resolve here); the accelerator count is the flavor's (0 on a CPU flavor).
    """
    vj_name = job_name(run_id)
    env = {name: paths.local_value(render_scalar(value), node) for name, value in spec.env.items()}
    env.update(
        {
            "MA_HOME": str(paths.root),
            "MA_MOUNT_PATH": str(paths.mount),
            "MA_JOB_DIR": str(paths.job_dir),
            "MA_LOG_DIR": str(paths.log_dir),
            "WORKSPACE": str(paths.code_dir),
            "MA_CURRENT_IP": LOCAL_HOST,
            "MA_NUM_GPUS": str(spec.cards_per_node or 0),
            "MA_TASK_NAME": TASK_NAME,
            "MA_NUM_HOSTS": str(nodes),
            "VC_TASK_INDEX": str(node),
            "VC_WORKER_NUM": str(nodes),
            "VC_WORKER_HOSTS": ",".join([LOCAL_HOST] * nodes),
            "MA_VJ_NAME": vj_name,
            "MA_CURRENT_INSTANCE_NAME": f"{vj_name}-{TASK_NAME}-{node}",
            "PYTHONUNBUFFERED": "1",
        }
    )
    for channel in (*spec.inputs, *spec.outputs):
        if channel.access_method == "env":
            env[channel.name] = channel_value(channel, paths)
    return env


def channel_value(channel: Channel, paths: ContainerPaths) -> str:
    """What the script receives for a channel: its ``<name>_0`` dir, or for an input that is one
    OBS file, that file inside the dir (ModelArts downloads the file into the dir)."""
    if channel.name in paths.outputs:
        return str(paths.outputs[channel.name])
    directory = paths.inputs[channel.name]
    if channel.obs.is_dir:
        return str(directory)
    return str(directory / channel.obs.name)


def script_args(
    spec: JobSpec,
    paths: ContainerPaths,
    *,
    node: int,
    nodes: int,
    master_port: int,
    masked: bool = False,
) -> list[str]:
    """``--<channel>=<dir>`` for each parameter channel, ``--<name>=<value>`` per hyperparameter
    and, for a preset engine on more than one node, ``--init_method --rank --world_size``.
    ``masked``: the arguments as majob shows them (a value from the environment is ``***``)."""
    mounts = paths.node_mounts(node)
    args = [
        f"--{c.name}={channel_value(c, paths)}"
        for c in (*spec.inputs, *spec.outputs)
        if c.access_method == "parameter"
    ]
    for name, value in spec.hyperparameters.items():
        hidden = masked and spec.from_environ.masks("hyperparameters", name)
        shown = render_scalar(value)  # a path on a volume or /cache: its stand-in here
        args.append(f"--{name}={MASK if hidden else container.mounted(shown, mounts) or shown}")
    if nodes > 1 and not spec.image.is_custom:
        args += [
            f"--init_method=tcp://{LOCAL_HOST}:{master_port}",
            f"--rank={node}",
            f"--world_size={nodes}",
        ]
    return args


def node_command(
    spec: JobSpec,
    paths: ContainerPaths,
    *,
    node: int,
    nodes: int,
    run_id: str,
    master_port: int,
    python: str,
) -> NodeCommand:
    """The full command of one node. A preset engine runs ``python <code>/<boot_file> args``; a
    custom image runs its ``command`` through ``/bin/sh -c`` (rewritten by ``shellcmd``: the
    shell expands the variables) with the same arguments appended, and nothing after them: the
    node's exit status is that of the command's last part, as in the container."""
    env = node_env(spec, paths, node=node, nodes=nodes, run_id=run_id)

    def argv_of(args: list[str]) -> tuple[str, ...]:
        if spec.image.command:
            line = container_command(
                spec.image.command, root=paths.root, python=python, path_vars=path_vars(spec)
            )
            return ("/bin/sh", "-c", " ".join([line, *(shlex.quote(a) for a in args)]))
        return (python, str(paths.code_dir / spec.code.boot_file), *args)

    def args(masked: bool) -> list[str]:
        return script_args(
            spec, paths, node=node, nodes=nodes, master_port=master_port, masked=masked
        )

    return NodeCommand(
        index=node,
        argv=argv_of(args(masked=False)),
        env=env,
        cwd=paths.code_dir,
        shown=argv_of(args(masked=True)),
    )


# The container variables that hold a path (node_env): a custom command may use them unquoted.
PATH_VARIABLES = ("MA_HOME", "MA_MOUNT_PATH", "MA_JOB_DIR", "MA_LOG_DIR", "WORKSPACE")


def path_vars(spec: JobSpec) -> tuple[str, ...]:
    """``PATH_VARIABLES`` and the channels passed as env variables (their value is a dir)."""
    channels = (c.name for c in (*spec.inputs, *spec.outputs) if c.access_method == "env")
    return (*PATH_VARIABLES, *channels)

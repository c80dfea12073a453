"""A job's training container as the fake lays it out and starts it: paths, environment,
arguments, one command per node (reference modelarts.md §3; the container contract of
docs/DESIGN). The container's ``/home/ma-user`` is ``<state>/modelarts/jobs/<id>/ma-user``:

::

    ma-user/                                  MA_HOME            (/home/ma-user)
    └── modelarts/                            MA_MOUNT_PATH
        ├── user-job-dir/                     MA_JOB_DIR
        │   └── <last dir of code_dir>/       WORKSPACE, the downloaded code, the working dir
        ├── inputs/<name>_0/                  an input's download: --<name>=<dir> (or the file)
        ├── outputs/<name>_0/                 --<name>=<dir>, uploaded to the output's OBS path
        └── log/                              MA_LOG_DIR

Each node is a process on 127.0.0.1 (ModelArts gives each its own container; here they share
the tree) with the variables ModelArts sets, the body's ``environments``, ``--<name>=<value>`` per
channel passed as a parameter and per hyperparameter, and for a preset engine (in its own image)
on more than one node ``--init_method=tcp://<worker-0>:<port> --rank=<i> --world_size=<n>``. A
custom image's command runs through ``/bin/sh -c`` with the same arguments appended.
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from majob.emulator.modelarts.plan import ChannelPlan, JobPlan
from majob.runner.nodes import TASK_NAME, NodeCommand
from majob.runner.shellcmd import container_command

HOME = PurePosixPath("/home/ma-user")  # MA_HOME
MOUNT = HOME / "modelarts"  # MA_MOUNT_PATH
HOST = "127.0.0.1"
# The container variables that hold a path: a custom command may use them unquoted.
PATH_VARIABLES = ("MA_HOME", "MA_MOUNT_PATH", "MA_JOB_DIR", "MA_LOG_DIR", "WORKSPACE")


@dataclass(frozen=True)
class JobContainer:
    """Where each container path of one job is; ``root`` stands for ``/home/ma-user``."""

    root: Path
    code_dir_name: str
    inputs: Mapping[str, Path]
    outputs: Mapping[str, Path]

    @property
    def mount(self) -> Path:
        return self.root / "modelarts"

    @property
    def job_dir(self) -> Path:
        return self.mount / "user-job-dir"

    @property
    def code_dir(self) -> Path:
        return self.job_dir / self.code_dir_name

    @property
    def log_dir(self) -> Path:
        return self.mount / "log"

    def local_value(self, value: str) -> str:
        """A variable's value that is a ``/home/ma-user`` path, as the job's (else unchanged)."""
        home = str(HOME)
        if value == home or value.startswith(home + "/"):
            return str(self.root) + value[len(home) :]
        return value

    def channel_value(self, channel: ChannelPlan) -> str:
        """What the script receives for a channel: its ``<name>_0`` dir, or for an input that
        is one OBS file, that file inside the dir (where it is downloaded)."""
        if channel.name in self.outputs:
            return str(self.outputs[channel.name])
        directory = self.inputs[channel.name]
        return str(directory if channel.uri.is_dir else directory / channel.uri.name)


def lay_out(plan: JobPlan, root: Path) -> JobContainer:
    """The job's container under ``root``: the code dir named after the last dir of the body's
    ``code_dir``, one ``<name>_0`` dir per input and output."""
    segments = [s for s in (plan.code_dir.bucket, *plan.code_dir.key.split("/")) if s]
    mount = root / "modelarts"
    return JobContainer(
        root=root,
        code_dir_name=segments[-1],
        inputs={c.name: mount / "inputs" / f"{c.name}_0" for c in plan.inputs},
        outputs={c.name: mount / "outputs" / f"{c.name}_0" for c in plan.outputs},
    )


def node_commands(
    plan: JobPlan, container: JobContainer, *, job_id: str, python: str, port: int
) -> list[NodeCommand]:
    """One command per node; ``port`` is where node 0 listens for the others."""
    return [
        NodeCommand(
            index=node,
            argv=_argv(plan, container, python, _arguments(plan, container, node, port)),
            env=_environment(plan, container, node, job_id),
            cwd=container.code_dir,
        )
        for node in range(plan.nodes)
    ]


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
    args += [f"--{name}={value}" for name, value in plan.parameters]
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

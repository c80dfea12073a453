"""``majob emulator start|stop|status|obs``: run the local emulators from the command line.

The ``obs`` command and the fake OBS's options are declared in ``majob.emulator.obs_command``
(``python -m majob.emulator.obs`` runs the same command without the CLI); the others here.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from majob.cli.common import user_errors
from majob.emulator.defaults import DEFAULT_BUCKETS, DEFAULT_REQUEST_TIMEOUT
from majob.emulator.obs_command import RequestTimeoutOption, obs_command
from majob.spec.emulator_state import RunningEmulator, emulator_state_dir, running_emulator

if TYPE_CHECKING:
    from majob.emulator.statefile import EmulatorEndpoints

emulator_app = typer.Typer(
    name="emulator",
    help="Run local emulators of the cloud services (no account needed).",
    no_args_is_help=True,
)

STARTING_NOTICE = (
    "starting the emulator (a fake OBS and a fake ModelArts on 127.0.0.1); on a busy machine "
    "this takes a few seconds"
)

StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        envvar="MAJOB_EMULATOR_DIR",
        help="Where the emulator keeps its state (default: emulator/ in the user's data dir).",
    ),
]


def _state_dir(state_dir: Path | None) -> Path:
    return (state_dir or emulator_state_dir()).resolve()


@emulator_app.command("start")
@user_errors
def start_command(
    state_dir: StateDirOption = None,
    bucket: Annotated[
        list[str] | None,
        typer.Option(help="Create this bucket (default: majob-demo). Repeatable."),
    ] = None,
    obs_port: Annotated[int, typer.Option(help="Port of the fake OBS; 0 picks one.")] = 0,
    modelarts_port: Annotated[
        int, typer.Option(help="Port of the fake ModelArts; 0 picks one.")
    ] = 0,
    foreground: Annotated[
        bool, typer.Option("--foreground", help="Run in this terminal until Ctrl-C.")
    ] = False,
    request_timeout: RequestTimeoutOption = DEFAULT_REQUEST_TIMEOUT,
) -> None:
    """Start the fake OBS and the fake ModelArts as one background process on 127.0.0.1."""
    from majob.emulator import daemon
    from majob.storage.uri import bucket_name_problem

    directory = _state_dir(state_dir)
    buckets = tuple(bucket or DEFAULT_BUCKETS)
    for name in buckets:
        if problem := bucket_name_problem(name):
            from majob.errors import ConfigError

            raise ConfigError(f"--bucket: {problem}")

    def announce(endpoints: EmulatorEndpoints) -> None:
        _print_endpoints(endpoints, directory)
        typer.echo("serving until Ctrl-C", err=True)

    if foreground:
        daemon.serve(
            directory,
            buckets=buckets,
            obs_port=obs_port,
            modelarts_port=modelarts_port,
            request_timeout=request_timeout,
            announce=announce,
        )
        return
    # A first start on a loaded machine can take seconds (a new interpreter imports the fakes):
    # past one, say what is being waited for (on stderr: stdout is the endpoints, for scripts).
    notice = threading.Timer(1.0, typer.echo, (STARTING_NOTICE,), {"err": True})
    notice.start()
    try:
        started = daemon.start(
            directory,
            buckets=buckets,
            obs_port=obs_port,
            modelarts_port=modelarts_port,
            request_timeout=request_timeout,
        )
    finally:
        notice.cancel()
    if started.already_running:
        typer.echo(f"the emulator is already running (pid {started.pid})")
    else:
        typer.echo(f"the emulator is running (pid {started.pid})")
    _print_endpoints(started.endpoints, directory)


def _print_endpoints(endpoints: EmulatorEndpoints | RunningEmulator, directory: Path) -> None:
    typer.echo(f"  OBS:        {endpoints.obs}")
    typer.echo(f"  ModelArts:  {endpoints.modelarts}")
    typer.echo(f"  region {endpoints.region}, project {endpoints.project_id}")
    typer.echo(f"  access key {endpoints.access_key} (the emulator's test key pair)")
    typer.echo(f"  state:      {directory}")
    typer.echo("  use it with: --profile emulator")


@emulator_app.command("stop")
@user_errors
def stop_command(state_dir: StateDirOption = None) -> None:
    """Stop the emulator and the jobs running in it."""
    from majob.emulator import daemon

    pid = daemon.stop(_state_dir(state_dir))
    typer.echo(
        "the emulator is not running" if pid is None else f"stopped the emulator (pid {pid})"
    )


@emulator_app.command("status")
@user_errors
def status_command(state_dir: StateDirOption = None) -> None:
    """Show where the emulator listens and how many jobs it has in each phase."""
    from majob.emulator import daemon

    directory = _state_dir(state_dir)
    endpoints = running_emulator(directory)
    typer.echo("the emulator is running")
    _print_endpoints(endpoints, directory)
    counts = daemon.job_counts(endpoints.modelarts)
    summary = ", ".join(f"{phase} {n}" for phase, n in sorted(counts.items())) or "none"
    typer.echo(f"  jobs: {summary}")


emulator_app.command("obs")(user_errors(obs_command))

"""``majob emulator start|stop|status|obs``: run the local emulators from the command line.

Every option is declared here once; ``python -m majob.emulator.obs`` runs the ``obs`` command.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from majob.cli.common import user_errors
from majob.emulator.endpoints import DEFAULT_REQUEST_TIMEOUT

emulator_app = typer.Typer(
    name="emulator",
    help="Run local emulators of the cloud services (no account needed).",
    no_args_is_help=True,
)

# The buckets the example specs (job_specs/*.yaml) use.
DEFAULT_BUCKETS = ("majob-demo",)

StateDirOption = Annotated[
    Path | None,
    typer.Option(
        "--state-dir",
        envvar="MAJOB_EMULATOR_DIR",
        help="Where the emulator keeps its state (default: .majob/emulator).",
    ),
]


# The fake OBS's, for ``start`` and ``obs`` alike.
RequestTimeoutOption = Annotated[
    float,
    typer.Option(
        "--request-timeout",
        min=0.01,
        help="Seconds the fake OBS waits for a client that stopped in the middle of a request "
        "body before it answers 400 RequestTimeout (S3 waits about 20).",
    ),
]


def _state_dir(state_dir: Path | None) -> Path:
    from majob.emulator.endpoints import emulator_state_dir

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
    from majob.emulator.endpoints import EmulatorEndpoints
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
    started = daemon.start(
        directory,
        buckets=buckets,
        obs_port=obs_port,
        modelarts_port=modelarts_port,
        request_timeout=request_timeout,
    )
    if started.already_running:
        typer.echo(f"the emulator is already running (pid {started.pid})")
    else:
        typer.echo(f"the emulator is running (pid {started.pid})")
    _print_endpoints(started.endpoints, directory)


def _print_endpoints(endpoints: object, directory: Path) -> None:
    from majob.emulator.endpoints import EmulatorEndpoints

    assert isinstance(endpoints, EmulatorEndpoints)
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
    from majob.emulator.endpoints import running_emulator

    directory = _state_dir(state_dir)
    endpoints = running_emulator(directory)
    typer.echo("the emulator is running")
    _print_endpoints(endpoints, directory)
    counts = daemon.job_counts(endpoints)
    summary = ", ".join(f"{phase} {n}" for phase, n in sorted(counts.items())) or "none"
    typer.echo(f"  jobs: {summary}")


@emulator_app.command("obs")
@user_errors
def obs_command(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1; 0 picks a free one.")] = 0,
    data: Annotated[
        Path | None, typer.Option(help="Keep objects in this directory (default: memory).")
    ] = None,
    region: Annotated[str, typer.Option(help="Region the fake reports.")] = "cn-north-4",
    bucket: Annotated[
        list[str] | None, typer.Option(help="Create this bucket at start. Repeatable.")
    ] = None,
    credential: Annotated[
        list[str] | None,
        typer.Option(help="Accept ACCESS_KEY:SECRET_KEY (default: the documented test pair)."),
    ] = None,
    # One flag: named --no-auth by itself, Typer would also make a --no-no-auth.
    no_auth: Annotated[
        bool, typer.Option("--no-auth", help="Accept requests without checking signatures.")
    ] = False,
    faults: Annotated[
        Path | None, typer.Option(help="JSON list of fault rules to apply (see docs/obs.md).")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the fault probabilities.")] = 0,
    request_timeout: RequestTimeoutOption = DEFAULT_REQUEST_TIMEOUT,
) -> None:
    """Run a fake OBS server on 127.0.0.1 until Ctrl-C; the first line printed is its endpoint."""
    from majob.emulator.obs.__main__ import load_fault_rules, parse_credentials, serve

    serve(
        port=port,
        data_dir=data,
        region=region,
        buckets=list(bucket or []),
        credentials={} if no_auth else parse_credentials(list(credential or [])),
        faults=load_fault_rules(faults) if faults else [],
        seed=seed,
        request_timeout=request_timeout,
    )

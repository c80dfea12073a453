"""``majob emulator obs``: run the local emulators from the command line."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from majob.cli.common import user_errors

emulator_app = typer.Typer(
    name="emulator",
    help="Run local emulators of the cloud services (no account needed).",
    no_args_is_help=True,
)


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
    )

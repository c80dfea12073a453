"""The ``obs`` command, declared once: ``majob emulator obs`` and ``python -m majob.emulator.obs``
both run it. Light (typer only): the CLI imports it at start-up; serving is imported when the
command runs. A bad argument raises ``ConfigError``; each caller prints it its own way.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from majob.emulator.defaults import DEFAULT_REQUEST_TIMEOUT, EMULATOR_REGION

# The fake OBS's, for ``majob emulator start`` and ``obs`` alike.
RequestTimeoutOption = Annotated[
    float,
    typer.Option(
        "--request-timeout",
        min=0.01,
        help="Seconds the fake OBS waits for a client that stopped in the middle of a request "
        "body before it answers 400 RequestTimeout (S3 waits about 20).",
    ),
]


def obs_command(
    port: Annotated[int, typer.Option(help="Port on 127.0.0.1; 0 picks a free one.")] = 0,
    data: Annotated[
        Path | None, typer.Option(help="Keep objects in this directory (default: memory).")
    ] = None,
    region: Annotated[
        str, typer.Option(help="Region the fake reports and expects V4 signatures scoped to.")
    ] = EMULATOR_REGION,
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
    from majob.emulator.obs.standalone import load_fault_rules, parse_credentials, serve

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

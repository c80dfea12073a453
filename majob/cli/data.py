"""``majob data ...``: large data. ``plan``: what each node downloads against its /cache, and
whether the inputs belong on SFS Turbo; ``stage``: copy a data set onto SFS Turbo
(``data_stage.py``; docs/data.md)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Annotated, Literal

import typer

from majob.cli.common import ProfileOption, SetOption, SpecFileArgument, user_errors
from majob.cli.data_stage import stage

if TYPE_CHECKING:
    from majob.service.dataplan import DataPlan

data_app = typer.Typer(
    name="data",
    help="Large data: size the inputs against each node's /cache, plan the OBS -> SFS path.",
    no_args_is_help=True,
)
data_app.command("stage")(user_errors(stage))


@data_app.command("plan")
@user_errors
def plan(
    spec: SpecFileArgument,
    stage: Annotated[
        Literal["debug", "formal"], typer.Option("--stage", help="The cloud stage to plan.")
    ] = "formal",
    cache_size: Annotated[
        str | None,
        typer.Option("--cache-size", help="Each node's /cache (e.g. 800GB) over the flavor's."),
    ] = None,
    bandwidth: Annotated[
        str | None,
        typer.Option("--bandwidth", help="One node's download rate per second (e.g. 500MB)."),
    ] = None,
    format_: Annotated[
        Literal["table", "json"], typer.Option("--format", help="table or json.")
    ] = "table",
    set_: SetOption = None,
    profile: ProfileOption = None,
) -> None:
    """Size SPEC's inputs against each node's /cache: keep them on OBS or move to SFS Turbo.

    One OBS listing per input (nothing downloaded), times the node count, against the flavor's
    /cache. Exit 1 when the inputs cannot fit it (majob submit refuses such a job)."""
    from majob.service.connect import open_store
    from majob.service.dataplan import plan_data
    from majob.sizes import parse_size
    from majob.spec.load import load_spec
    from majob.spec.profiles import load_profile

    selected = load_profile(profile)
    job_spec = load_spec(spec, overrides=set_ or (), profile=selected, check_files="code_dir")
    store = open_store(selected)
    try:
        found = plan_data(
            job_spec.at_stage(stage),
            store,
            cache_size=parse_size(cache_size) if cache_size else None,
            bandwidth=parse_size(bandwidth) if bandwidth else None,
        )
    finally:
        store.close()
    if format_ == "json":
        typer.echo(json.dumps(_as_json(found), indent=2))
    else:
        _print_table(found)
    if found.verdict == "cannot fit":
        raise typer.Exit(1)


def _print_table(found: DataPlan) -> None:
    from rich.console import Console
    from rich.table import Table

    from majob.sizes import format_size

    table = Table("input", "OBS", "objects", "total", "largest", "under 1 MiB")
    for size in found.inputs:
        table.add_row(
            size.name,
            size.uri,
            str(size.objects),
            format_size(size.total),
            format_size(size.largest),
            f"{size.small_share:.0%}",
        )
    console = Console()
    if found.inputs:
        console.print(table)
    else:
        console.print("the spec has no inputs: nothing is downloaded")
    for line in found.lines():
        console.print(line, markup=False, highlight=False)


def _as_json(found: DataPlan) -> dict[str, object]:
    from dataclasses import asdict

    return {
        "inputs": [asdict(size) for size in found.inputs],
        "nodes": found.nodes,
        "flavor": found.flavor,
        "per_node_bytes": found.per_node,
        "job_bytes": found.per_node * found.nodes,
        "cache_bytes": found.cache_bytes,
        "cache_source": found.cache_source,
        "bandwidth": found.bandwidth,
        "bandwidth_source": found.bandwidth_source,
        "download_seconds": round(found.download_seconds, 1),
        "epochs": found.epochs,
        "verdict": found.verdict,
        "reasons": found.reasons(),
    }

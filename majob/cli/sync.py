"""``majob sync SPEC``: put the spec's code at ``code.obs``, exactly as ``majob submit`` does.

Both commands go through ``service.code.sync_code`` with the spec at the same stage, so the set
of files sent (``code.dir`` minus ``code.ignore``, .gitignore/.majobignore and likely secrets)
cannot differ. Heavy modules (the spec models, the OBS SDK) load inside the command body.
"""

from __future__ import annotations

from typing import Annotated

import typer

from majob.cli.common import (
    ProfileOption,
    SetOption,
    SpecFileArgument,
    print_sync_plan,
    user_errors,
)

commands = typer.Typer()

DRY_RUN_LINES = 20  # files a dry run lists without -v


@commands.command("sync")
@user_errors
def sync(
    spec: SpecFileArgument,
    stage: Annotated[
        str, typer.Option("--stage", help="debug or formal: the stage whose code is sent.")
    ] = "debug",
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Print the plan; upload and delete nothing.")
    ] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", "-v", help=f"List every planned file (a dry run lists {DRY_RUN_LINES})."
        ),
    ] = False,
    set_: SetOption = None,
    profile: ProfileOption = None,
    allow_secrets: Annotated[
        bool,
        typer.Option(
            "--allow-secrets",
            help="Upload files that look like secrets (.env, id_rsa*, *.pem...) too; "
            "majob submit never does.",
        ),
    ] = False,
) -> None:
    """Upload SPEC's code dir to its code.obs: the files majob submit would send, nothing else.

    Honours code.ignore, .gitignore, .majobignore; deletes what under code.obs left the code.
    """
    from majob.service.code import sync_code
    from majob.service.connect import open_store
    from majob.service.submit import cloud_stage
    from majob.spec.load import load_spec
    from majob.spec.profiles import load_profile

    chosen = cloud_stage(stage)
    selected = load_profile(profile)
    job_spec = load_spec(spec, overrides=set_ or (), profile=selected).at_stage(chosen)

    # Every planned file with -v; a dry run lists the first few; a real sync only counts them.
    listed = None if verbose else DRY_RUN_LINES if dry_run else 0
    store = open_store(selected)
    try:
        _, result = sync_code(
            job_spec,
            store,
            dry_run=dry_run,
            on_plan=lambda plan: print_sync_plan(plan, listed),
            allow_secrets=allow_secrets,
        )
    finally:
        store.close()
    if result is None:
        typer.echo("dry run: nothing uploaded or deleted")
    else:
        typer.echo(result.summary_line())

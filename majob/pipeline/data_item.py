"""The checklist's "OBS -> SFS planned" item (the migration guide: large data goes OBS -> SFS
Turbo), evaluated from the data plan (``service/dataplan.py``) and the ledger's stages
(``data_stages.py``):

- **staged** (done): the spec mounts a share (``volumes:``) that ``majob data stage`` filled and
  verified; the figures are the stage's;
- **planned** (done): the spec mounts a share majob did not fill (filled some other way, e.g.
  obsutil), so majob cannot vouch for its content: the detail says so;
- **not needed**: the plan keeps the inputs on OBS (they fit each node's /cache with room);
- **todo**: the plan says SFS Turbo or "cannot fit", and no volume is mounted: the fix names
  ``majob data stage``;
- **not checked**: OBS cannot be read (no profile, no credentials): the local stand-ins' sizes
  are shown instead.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from majob.errors import MajobError
from majob.pipeline.checklist_item import Item
from majob.pipeline.data_stages import stages_into
from majob.pipeline.ledger import Ledger
from majob.sizes import format_size
from majob.spec.models import JobSpec
from majob.storage.tree_size import tree_size

if TYPE_CHECKING:
    from majob.storage.base import ObjectStore

TITLE = "OBS -> SFS planned"


def data_item(formal: JobSpec, ledger: Ledger, store: ObjectStore | None) -> Item:
    if formal.volumes:
        return _mounted(formal, ledger)
    if store is None:
        return Item("data", TITLE, "not checked", _local_sizes(formal), "majob data plan SPEC")
    from majob.service.dataplan import plan_data

    try:
        plan = plan_data(formal, store, require_data=False)
    except MajobError as error:
        return Item("data", TITLE, "not checked", error.message, "majob data plan SPEC")
    figures = "; ".join(plan.lines()[:3])
    if plan.verdict == "obs":
        return Item("data", TITLE, "not needed", f"{figures}; {plan.reasons()[0]}")
    first = plan.inputs[0].uri if plan.inputs else "obs://BUCKET/DATA/"
    return Item(
        "data",
        TITLE,
        "todo",
        f"{figures}; {'; '.join(plan.reasons())}",
        f"majob data stage {first} sfs://SERVER/PATH --pool POOL, then mount it with "
        "volumes: [{nfs: SERVER:/PATH, mount: /mnt/data}] and read the data from there",
    )


def _mounted(formal: JobSpec, ledger: Ledger) -> Item:
    staged = stages_into(ledger, [volume.nfs for volume in formal.volumes])
    said = []
    for volume in formal.volumes:
        stage = staged.get(volume.nfs)
        if stage is None:
            said.append(f"{volume.nfs} at {volume.mount}: planned, not staged by majob")
        else:
            said.append(
                f"{volume.nfs} at {volume.mount}: staged from {stage.source} "
                f"({stage.files} files, {format_size(stage.bytes)}; job {stage.job_id}, "
                f"{stage.staged_at})"
            )
    missing = [v.nfs for v in formal.volumes if v.nfs not in staged]
    return Item(
        "data",
        TITLE,
        "done",
        "; ".join(said),
        ""
        if not missing
        else f"{missing[0]} was filled outside majob: majob data stage obs://... "
        "sfs://SERVER/PATH verifies and records a copy",
    )


def _local_sizes(formal: JobSpec) -> str:
    shown = []
    for channel in formal.inputs:
        if channel.local is not None and Path(channel.local).exists():
            shown.append(f"{channel.name} ({format_size(tree_size(Path(channel.local)))} here)")
        else:
            shown.append(f"{channel.name} (on OBS only)")
    return f"OBS not read (no profile to reach it); inputs: {', '.join(shown) or 'none'}"

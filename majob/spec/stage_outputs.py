"""Each cloud stage writes under a folder of its own in every output.

The debug and formal jobs of one spec used to share each output's OBS folder, so the formal job,
whose checkpoint output is downloaded into its container before it starts
(``fault_tolerance.checkpoints``), got the debug job's checkpoints and resumed from them, and
its outputs were listed mixed with the debug job's. Now an output ``obs://b/out/`` is
``obs://b/out/debug/`` for the debug stage and ``obs://b/out/formal/`` for the formal one, unless
the stage names a folder itself (``stages.formal.outputs: {train_url: obs://b/exact/}``). The
local stage writes to each output's ``local`` stand-in and keeps the spec's folders.

The folder is named after the stage, not the job: a re-submit of a stage (a failed formal job,
its code fixed) must find the checkpoints its earlier job saved, which a folder per job would
hide. Pure: plain data in, problems out (``JobSpec`` locates them at the field they name).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from majob.spec.positions import Loc
from majob.spec.rules import Problem
from majob.storage.uri import MAX_KEY_BYTES, ObsUri

#: The stages that run on ModelArts, each in folders of its own.
CLOUD_STAGES = ("debug", "formal")

Folders = Sequence[tuple[str, ObsUri]]  # (output name, OBS folder) in spec order


def stage_folder(folder: ObsUri, stage: str) -> ObsUri:
    """``<folder><stage>/``: where ``stage`` writes an output whose spec folder is ``folder``."""
    return folder.join(f"{stage}/")


def stage_folders(outputs: Folders, stage: str, named: Mapping[str, ObsUri]) -> dict[str, ObsUri]:
    """Each output's folder at ``stage``: the one the stage names (``named``), else the spec's
    folder with the stage's own below it; the local stage keeps the spec's folders."""
    if stage not in CLOUD_STAGES:
        return dict(outputs)
    return {name: named.get(name) or stage_folder(folder, stage) for name, folder in outputs}


def room_problems(outputs: Folders) -> list[Problem]:
    """An output folder so long that a stage's folder below it would pass OBS's key limit
    (checked first: the stages' specs cannot be made without their folders)."""
    longest = max(len(stage) for stage in CLOUD_STAGES) + 1  # "formal/"
    return [
        (
            ("outputs", index, "obs"),
            f"{folder} leaves no room for the stages' folders (<stage>/) within OBS's "
            f"{MAX_KEY_BYTES}-byte keys; use a shorter folder",
        )
        for index, (_, folder) in enumerate(outputs)
        if len(folder.key.encode("utf-8")) + longest > MAX_KEY_BYTES
    ]


def _inside(inner: ObsUri, outer: ObsUri) -> bool:
    """``inner`` is ``outer`` or a folder below it."""
    return inner.bucket == outer.bucket and inner.key.startswith(outer.key)


def stage_output_problems(
    outputs: Folders, named: Mapping[str, Mapping[str, ObsUri]]
) -> list[Problem]:
    """What is wrong with the stages' output folders: ``named`` is each stage's
    ``stages.<stage>.outputs``. A stage may name only the spec's outputs, the local stage none
    (it writes to the ``local`` stand-ins), and no folder of one cloud stage may be, or hold, a
    folder of the other: stages never share outputs."""
    names = [name for name, _ in outputs]
    problems: list[Problem] = []
    for stage, folders in named.items():
        for name in folders:
            where: Loc = ("stages", stage, "outputs", name)
            if stage not in CLOUD_STAGES:
                problems.append(
                    (
                        where,
                        "the local stage writes each output to its local stand-in, not to OBS; "
                        f"set outputs.{name}.local instead, or name a folder for debug or formal",
                    )
                )
            elif name not in names:
                known = ", ".join(names) or "none: add one under outputs"
                problems.append(
                    (where, f"{name!r} is not an output of this spec (outputs: {known})")
                )
    return problems + _shared_folders(outputs, named)


def _shared_folders(outputs: Folders, named: Mapping[str, Mapping[str, ObsUri]]) -> list[Problem]:
    """A problem for each folder of the formal stage that is, holds or lies in one of the debug
    stage's, placed where the spec named the folder."""
    index = {name: position for position, (name, _) in enumerate(outputs)}

    def place(stage: str, name: str) -> Loc:
        if name in named.get(stage, {}):
            return ("stages", stage, "outputs", name)
        return ("outputs", index[name], "obs")

    debug = stage_folders(outputs, "debug", named.get("debug", {}))
    formal = stage_folders(outputs, "formal", named.get("formal", {}))
    problems: list[Problem] = []
    for formal_name, formal_folder in formal.items():
        for debug_name, debug_folder in debug.items():
            if not (_inside(formal_folder, debug_folder) or _inside(debug_folder, formal_folder)):
                continue
            # Report it where a folder was named for a stage; else at the spec's output.
            stage, name = (
                ("formal", formal_name)
                if formal_name in named.get("formal", {})
                or debug_name not in named.get("debug", {})
                else ("debug", debug_name)
            )
            problems.append(
                (
                    place(stage, name),
                    f"the formal stage's {formal_name} folder {formal_folder} and the debug "
                    f"stage's {debug_name} folder {debug_folder} overlap, so one stage would "
                    "read or list the other's files; give each stage a folder of its own",
                )
            )
    return problems

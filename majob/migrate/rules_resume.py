"""The resume rules (MA4xx): checkpoints saved every epoch by a script that never loads one
(MA401), saved outside the spec's checkpoint folder (MA402), or written straight to their final
name (MA403). ``resume_plan`` writes the load-at-start block that ``--to resume`` adds."""

from __future__ import annotations

import ast

from majob.migrate import patterns as pt
from majob.migrate.facts import FileFacts
from majob.migrate.facts.resume import CheckpointSave
from majob.migrate.findings import FileFindings, Fix, Span
from majob.migrate.resume_plan import path_parts, plan_resume
from majob.migrate.rules import Codemod

# Words in a save's path that say it goes to a temporary name first.
_TEMPORARY = ("tmp", "temp", "partial")
# Calls a path may hold and still be evaluated twice safely (the atomic save names it twice).
_PURE_CALLS = frozenset({"os.path.join", "str", "Path", "pathlib.Path", "format"})
_SAVE_PATH, _LOAD_PATH = pt.PATH_CALLS["torch.save"], pt.PATH_CALLS["torch.load"]


def check_resume(
    facts: FileFacts,
    out: FileFindings,
    source: str,
    checkpoints: tuple[str, str] | None = None,
) -> list[CheckpointSave]:
    """MA401-MA403 for one file (of text ``source``); ``checkpoints`` is the spec's (output,
    folder), if given. Returns the file's per-epoch saves (``per_epoch_saves``)."""
    if checkpoints is not None:
        _ma402_resume_outside_folder(facts, out, checkpoints)
    per_epoch = per_epoch_saves(facts)
    if not per_epoch:
        return per_epoch
    _ma401_saves_without_resume(facts, out, source, per_epoch)
    torch_saves = [s for s in per_epoch if s.kind == "torch"]
    if checkpoints is not None:
        _ma402_outside_folder(facts, out, torch_saves, checkpoints)
    _ma403_non_atomic(facts, out, source, torch_saves)
    return per_epoch


def per_epoch_saves(facts: FileFacts) -> list[CheckpointSave]:
    """Saves that run every epoch: inside an epoch loop, or a ``torch.save`` in a function of
    the file that an epoch loop calls (``save_checkpoint``, ``test(epoch)``)."""
    called = {call.callee for call in facts.loop_calls}
    return [
        save
        for save in facts.checkpoint_saves
        if save.loop is not None
        or save.in_steps
        or (save.kind == "torch" and save.scope.function in called)
    ]


def _ma401_saves_without_resume(
    facts: FileFacts,
    out: FileFindings,
    source: str,
    per_epoch: list[CheckpointSave],
) -> None:
    if facts.checkpoint_loads:
        return
    savers = {s.scope.function for s in per_epoch if s.kind == "torch" and s.loop is None}
    sites = [s.span for s in per_epoch if s.loop is not None or s.in_steps]
    sites += [call.span for call in facts.loop_calls if call.callee in savers]
    first = min(sites)
    in_loop = [s for s in per_epoch if s.loop is not None and s.kind == "torch" and s.span == first]
    if not in_loop:
        stepped = any(s.in_steps and s.span == first for s in per_epoch)
        why = (
            "the loop is over steps, not epochs"
            if stepped
            else "the save runs in a function the epoch loop calls"
        )
        out.report("MA401", first, f"not rewritten ({why}): add the load by hand")
        return
    planned = plan_resume(facts, source, in_loop[0])
    if isinstance(planned, str):
        out.report("MA401", first, f"not rewritten ({planned}): add the load by hand")
        return
    out.report("MA401", first, "", *planned)


def _ma402_outside_folder(
    facts: FileFacts,
    out: FileFindings,
    saves: list[CheckpointSave],
    checkpoints: tuple[str, str],
) -> None:
    output, folder = checkpoints
    where = f"{output}/{folder}/" if folder else f"{output}/"
    for save in saves:
        path = _SAVE_PATH.argument(save.node)
        parts = path_parts(path, facts) if path is not None else None
        if parts is None:
            continue  # a local variable or a literal (MA102): where it goes is not known here
        root, rest = parts
        if root != output:
            out.report("MA402", save.span, f"saved under args.{root}, the spec keeps {where}")
        elif folder and rest.split("/")[0] != folder:
            shown = f"{output}/{rest}" if rest else output
            out.report("MA402", save.span, f"saved to {shown}, the spec keeps {where}")


def _ma402_resume_outside_folder(
    facts: FileFacts, out: FileFindings, checkpoints: tuple[str, str]
) -> None:
    """A ``torch.load`` from the checkpoint output but outside its folder (``cloud-paths`` keeps
    ``./checkpoint/ckpt.pth`` as ``<train_url>/checkpoint/ckpt.pth``): a restarted job finds
    only the predownloaded folder there."""
    output, folder = checkpoints
    if not folder:
        return
    for call in facts.torch_loads:
        path = _LOAD_PATH.argument(call)
        parts = path_parts(path, facts) if path is not None else None
        if parts is not None and parts[0] == output and parts[1].split("/")[0] != folder:
            shown = f"{output}/{parts[1]}" if parts[1] else output
            detail = f"resumes from {shown}, the spec keeps {output}/{folder}/"
            out.report("MA402", facts.span(call), detail)


def _ma403_non_atomic(
    facts: FileFacts, out: FileFindings, source: str, saves: list[CheckpointSave]
) -> None:
    for save in saves:
        path = _SAVE_PATH.argument(save.node)
        if path is None:
            continue
        text = facts.segment(path) or ""
        renamed = any(
            scope is save.scope and line >= save.span.line for scope, line in facts.renames
        )
        if renamed or any(word in text.lower() for word in _TEMPORARY):
            continue
        out.report("MA403", save.span, "", *_atomic_fix(facts, source, save, path, text))


def _atomic_fix(
    facts: FileFacts, source: str, save: CheckpointSave, path: ast.expr, text: str
) -> list[Fix]:
    """``torch.save(obj, path)`` -> ``torch.save(obj, f"{path}.tmp")`` and ``os.replace``: only
    for a whole statement whose path can be named twice (no call but joins and conversions); a
    path that is more than a name is named once first (``checkpoint_file = ...``)."""
    os_name = facts.binding("os")
    if save.stmt is None or os_name is None or "\n" in text:
        return []
    for sub in ast.walk(path):
        if type(sub) is not ast.Call:
            continue
        func = sub.func
        name = facts.qualname(func) or (func.id if type(func) is ast.Name else "")
        if name not in _PURE_CALLS and not (type(func) is ast.Attribute and func.attr == "format"):
            return []
    fixes = []
    if type(path) not in (ast.Name, ast.Attribute):
        if "checkpoint_file" in source:  # taken (a substring test: cheap, and safe)
            return []
        fixes.append(_fix("insert-before", save.stmt, f"checkpoint_file = {text}\n"))
        text = "checkpoint_file"
    fixes.append(_fix("replace-expr", facts.span(path), f'f"{{{text}}}.tmp"'))
    replace = f'{os_name}.replace(f"{{{text}}}.tmp", {text})  # atomic: no half-written file\n'
    fixes.append(_fix("insert-after", save.stmt, replace))
    return fixes


def _fix(action: str, span: Span, code: str) -> Fix:
    return Fix(Codemod.RESUME, "MA403", action, span, code=code)


__all__ = ["check_resume"]

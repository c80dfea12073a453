"""The load-at-start block of ``majob migrate --to resume``, planned where the pattern is clear:
``for epoch in range(...)`` saving ``torch.save({...epoch, model, optimizer states...},
os.path.join(<folder>, <name>))`` every epoch. The block loads the newest readable checkpoint
of that folder (a file cut short by a kill is skipped for the one before) and the loop starts
after its epoch. Anything less clear is left as it is, with the reason."""

from __future__ import annotations

import ast
import re

from majob.migrate.facts import FileFacts
from majob.migrate.facts.resume import CheckpointSave
from majob.migrate.findings import Fix
from majob.migrate.path_channels import py_str
from majob.migrate.rules import Codemod

# The names the block adds: a file already using one is left alone.
ADDED_NAMES = (
    "first_epoch",
    "resume_dir",
    "resume_names",
    "resume_name",
    "resume_file",
    "resume_state",
)


def path_parts(path: ast.expr, facts: FileFacts) -> tuple[str, str] | None:
    """``os.path.join(args.train_url, "ckpt", name)`` -> ``("train_url", "ckpt/<name>")``: the
    parsed argument a path starts from and its literal rest (``*`` for a formatted part), or
    None when it does not start from one."""
    parts = _parts(path, facts)
    if not parts or type(parts[0]) is not ast.Attribute or type(parts[0].value) is not ast.Name:
        return None
    if parts[0].value.id not in facts.args_names:
        return None
    rest = "/".join(_literal(part) for part in parts[1:])
    return parts[0].attr, re.sub("/+", "/", rest).strip("/")


def _parts(path: ast.expr, facts: FileFacts) -> list[ast.expr]:
    if type(path) is ast.Call and facts.qualname(path.func) == "os.path.join":
        return list(path.args)
    if type(path) is ast.BinOp and type(path.op) is ast.Add:
        return _parts(path.left, facts)  # path + ".tmp": the same folder
    if type(path) is ast.BinOp and type(path.op) is ast.Div:
        return [*_parts(path.left, facts), path.right]
    if type(path) is ast.JoinedStr and path.values and type(path.values[0]) is ast.FormattedValue:
        return [path.values[0].value, ast.JoinedStr(values=path.values[1:])]
    return [path]


def _literal(part: ast.expr) -> str:
    if type(part) is ast.Constant and isinstance(part.value, str):
        return part.value
    if type(part) is ast.JoinedStr:
        return "".join(_literal(v) for v in part.values)
    return "*"


def plan_resume(facts: FileFacts, source: str, save: CheckpointSave) -> list[Fix] | str:
    """The fixes adding the load block before the loop of ``save``, or why there are none."""
    if save.loop is None or save.scope is not save.loop.scope:
        return "the save is not in the epoch loop's own body"
    loop = save.loop.node
    if type(loop) is not ast.For or type(loop.target) is not ast.Name or not _is_range(loop.iter):
        return "the epoch loop is not `for epoch in range(...)`"
    if save.stmt is None or not save.node.args:
        return "the save is not a statement of its own"
    keys = _state_keys(facts, loop, save, loop.target.id)
    if isinstance(keys, str):
        return keys
    place = _folder_and_names(facts, save, loop.target.id)
    if isinstance(place, str):
        return place
    assigned = {n.id for n in ast.walk(loop) if type(n) is ast.Name and type(n.ctx) is ast.Store}
    if any(re.search(rf"\b{name}\b", place[0]) for name in assigned):
        return "the checkpoint folder is named inside the loop"
    os_name, torch_name = facts.binding("os"), facts.binding("torch")
    if os_name is None or torch_name is None:
        return "the file does not `import os` and `import torch`"
    taken = [name for name in ADDED_NAMES if name in source]  # a substring: cheap, and safe
    if taken:
        return f"the names the block adds are taken ({', '.join(taken)})"
    iter_call = loop.iter
    assert isinstance(iter_call, ast.Call)
    bounds = [facts.segment(a) or "" for a in iter_call.args]
    start, end = (bounds[0], bounds[1]) if len(bounds) == 2 else ("0", bounds[0])
    block = _block(os_name, torch_name, start, place, keys)
    loop_span = facts.span(loop)
    return [
        Fix(Codemod.RESUME, "MA401", "insert-before", loop_span, code=block),
        Fix(
            Codemod.RESUME,
            "MA401",
            "replace-expr",
            facts.span(iter_call),
            code=f"{facts.segment(iter_call.func)}(first_epoch, {end})",
        ),
    ]


def _is_range(node: ast.expr) -> bool:
    return (
        type(node) is ast.Call
        and type(node.func) is ast.Name
        and node.func.id == "range"
        and len(node.args) in (1, 2)
        and not node.keywords
    )


def _state_keys(
    facts: FileFacts, loop: ast.For, save: CheckpointSave, epoch: str
) -> tuple[str, str, str, str, str, int] | str:
    """(model, model key, optimizer, optimizer key, epoch key, epoch offset) of the saved dict."""
    saved = _saved_dict(loop, save)
    if saved is None:
        return "the checkpoint is not a dict of the epoch, model and optimizer states"
    model = optimizer = epoch_key = None
    offset = 1
    for key, value in zip(saved.keys, saved.values, strict=True):
        if type(key) is not ast.Constant or not isinstance(key.value, str):
            continue
        owner = _state_dict_owner(value)
        if owner is not None:
            text = facts.segment(owner) or ""
            if "optim" in text.lower() or "optim" in key.value.lower():
                optimizer = (text, key.value)
            else:
                model = (text, key.value)
        elif type(value) is ast.Name and value.id == epoch:
            epoch_key = key.value
        elif _is_epoch_plus_one(value, epoch):
            epoch_key, offset = key.value, 0
    if model is None or optimizer is None or epoch_key is None:
        missing = [n for n, v in (("model", model), ("optimizer", optimizer)) if v is None]
        missing += ["epoch"] if epoch_key is None else []
        return f"the checkpoint holds no {' and no '.join(missing)} state to resume from"
    return model[0], model[1], optimizer[0], optimizer[1], epoch_key, offset


def _saved_dict(loop: ast.For, save: CheckpointSave) -> ast.Dict | None:
    obj = save.node.args[0]
    if type(obj) is ast.Dict:
        return obj
    if type(obj) is not ast.Name:
        return None
    found = None
    for node in ast.walk(loop):
        if (
            type(node) is ast.Assign
            and node.lineno < save.span.line
            and len(node.targets) == 1
            and type(node.targets[0]) is ast.Name
            and node.targets[0].id == obj.id
        ):
            found = node.value if type(node.value) is ast.Dict else None
    return found


def _state_dict_owner(value: ast.expr) -> ast.expr | None:
    if (
        type(value) is ast.Call
        and type(value.func) is ast.Attribute
        and value.func.attr == "state_dict"
        and not value.args
    ):
        return value.func.value
    return None


def _is_epoch_plus_one(value: ast.expr, epoch: str) -> bool:
    return (
        type(value) is ast.BinOp
        and type(value.op) is ast.Add
        and type(value.left) is ast.Name
        and value.left.id == epoch
        and type(value.right) is ast.Constant
        and value.right.value == 1
    )


def _folder_and_names(
    facts: FileFacts, save: CheckpointSave, epoch: str
) -> tuple[str, str, str] | str:
    """(the folder's code, the file names' prefix and suffix) of ``os.path.join(folder, name)``."""
    path = save.node.args[1] if len(save.node.args) > 1 else None
    if path is None or type(path) is not ast.Call or facts.qualname(path.func) != "os.path.join":
        return "the checkpoint path is not os.path.join(<folder>, <file name>)"
    *folder, name = path.args
    names = {n.id for part in folder for n in ast.walk(part) if type(n) is ast.Name}
    if not folder or epoch in names or any(type(p) is ast.Starred for p in path.args):
        return "the checkpoint folder changes with the epoch"
    texts = [facts.segment(part) or "" for part in folder]
    folder_code = texts[0] if len(texts) == 1 else f"os.path.join({', '.join(texts)})"
    if type(name) is ast.Constant and isinstance(name.value, str):
        return folder_code, name.value, name.value
    if type(name) is ast.JoinedStr and any(type(v) is ast.FormattedValue for v in name.values):
        values = name.values
        prefix = _literal(values[0]) if type(values[0]) is ast.Constant else ""
        suffix = _literal(values[-1]) if type(values[-1]) is ast.Constant else ""
        if suffix:
            return folder_code, prefix, suffix
    return "the checkpoint's file name is not a literal or an f-string ending in a literal"


def _block(
    os_name: str,
    torch_name: str,
    start: str,
    place: tuple[str, str, str],
    keys: tuple[str, str, str, str, str, int],
) -> str:
    folder, prefix, suffix = place
    model, model_key, optimizer, optimizer_key, epoch_key, offset = keys
    after = f" + {offset}" if offset else ""
    if prefix == suffix:  # one file name, overwritten every epoch
        matches = f"name == {py_str(prefix)}"
    else:
        matches = f"name.startswith({py_str(prefix)}) and name.endswith({py_str(suffix)})"
    return f"""\
first_epoch = {start}  # majob migrate --to resume: carry on from the newest readable checkpoint
resume_dir = {folder}
resume_names = sorted(
    (
        name
        for name in ({os_name}.listdir(resume_dir) if {os_name}.path.isdir(resume_dir) else [])
        if {matches}
    ),
    key=lambda name: (len(name), name),
)
for resume_name in reversed(resume_names):
    try:
        resume_file = {os_name}.path.join(resume_dir, resume_name)
        resume_state = {torch_name}.load(resume_file, map_location="cpu")
    except Exception as error:  # cut short by a kill during the save: take the one before
        print(f"resume: skipping {{resume_name}}: {{error}}")
        continue
    {model}.load_state_dict(resume_state[{py_str(model_key)}])
    {optimizer}.load_state_dict(resume_state[{py_str(optimizer_key)}])
    first_epoch = resume_state[{py_str(epoch_key)}]{after}
    print(f"resume: {{resume_name}}, from epoch {{first_epoch}}")
    break
"""

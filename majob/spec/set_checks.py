"""Warnings about ``--set`` flags that would not do what they say.

A stage's override wins over the top-level field it names (``JobSpec.at_stage``): with
``stages.debug.hyperparameters.epochs: 1`` in the spec, ``--set hyperparameters.epochs=3`` still
runs debug with 1. That is the rule (a stage says what it needs), but a ``--set`` it silently
beats is a surprise, so ``shadowed_sets`` names each one, with the flag that would reach the
stage.

A hyperparameter reaches the script as ``--name=value``; a name its argparse does not define
stops ``parse_args()`` (or is ignored by ``parse_known_args()``). ``undefined_hyperparameters``
reads the code's ``add_argument`` calls as ``majob init`` does (``spec/starter.py``, with
``ast``: nothing is run) and names each ``--set`` hyperparameter none of them defines. Code
that defines no option at all (no argparse) is not judged.
"""

from __future__ import annotations

import difflib
import os
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from majob.spec.models import JobSpec, Stage, StageOverride
from majob.spec.overrides import parse_override

MAX_FILES = 300  # .py files read for add_argument calls: a code dir is small (ModelArts: 1,000)
MAX_BYTES = 1 << 20  # a bigger .py file is generated, not where argparse is set up


class SetWarning(UserWarning):
    """An override (the Python API's ``overrides=``) that would not do what it says."""


def set_warnings(
    spec: JobSpec, overrides: Sequence[str], stages: Sequence[Stage], flag: str = "--set"
) -> list[str]:
    """Every warning about ``overrides`` when ``stages`` run: the ones a stage beats, the
    hyperparameters the code does not define. ``flag`` is how the user wrote them."""
    if not overrides:
        return []
    return [
        *shadowed_sets(spec, overrides, stages, flag),
        *undefined_hyperparameters(spec, overrides, flag),
    ]


def sweep_set_warnings(
    spec: JobSpec, overrides: Sequence[str], stage: Stage, flag: str = "--set"
) -> list[str]:
    """``set_warnings`` for a sweep's trials at ``stage``, and one per ``--set`` of a
    hyperparameter the sweep searches: each trial's sampled value replaces it."""
    lines = set_warnings(spec, overrides, [stage], flag)
    space = spec.sweep.space if spec.sweep is not None else {}
    for text in overrides:
        parts = _parts(text) or []
        name = _hyperparameter_named(parts)
        if name in space:
            lines.append(
                f"{flag} {text}: {name} is searched (sweep.space.{name}), so every trial runs "
                f"with its own sampled value; to fix {name}, remove it from sweep.space"
            )
    return lines


def _hyperparameter_named(parts: list[str]) -> str | None:
    """``hyperparameters.lr`` or ``stages.debug.hyperparameters.lr`` -> ``lr``."""
    if len(parts) == 2 and parts[0] == "hyperparameters":
        return parts[1]
    if len(parts) == 4 and parts[0] == "stages" and parts[2] == "hyperparameters":
        return parts[3]
    return None


def warn_overrides(spec: JobSpec, overrides: Sequence[str], stages: Sequence[Stage]) -> None:
    """The Python API's way of saying it: one ``SetWarning`` per problem, pointing at the
    caller of the API function that took ``overrides``."""
    for line in set_warnings(spec, overrides, stages, flag="override"):
        warnings.warn(line, SetWarning, stacklevel=3)


def shadowed_sets(
    spec: JobSpec, overrides: Sequence[str], stages: Sequence[Stage], flag: str = "--set"
) -> list[str]:
    """One warning per ``--set`` a stage of ``stages`` overrides, naming what it runs with."""
    warnings = []
    for text in overrides:
        parts = _parts(text)
        raw = text.partition("=")[2]
        for stage in stages:
            override = spec.stages.get(stage)
            if parts is None or override is None:
                continue
            for field, value in _replaced(_named_output(parts, spec), override):
                where = f"stages.{stage}.{field}"
                warnings.append(
                    f"{flag} {text}: the {stage} stage runs with {where}={value!r} from the spec "
                    f"(a stage's override wins); to change it there, {flag} {where}={raw}"
                )
    return warnings


def _named_output(parts: list[str], spec: JobSpec) -> list[str]:
    """``outputs.0.obs`` as ``outputs.train_url.obs``: a stage names its folders by output."""
    if len(parts) >= 2 and parts[0] == "outputs" and parts[1].isdigit():
        index = int(parts[1])
        if index < len(spec.outputs):
            return ["outputs", spec.outputs[index].name, *parts[2:]]
    return parts


def _replaced(parts: list[str], override: StageOverride) -> Iterator[tuple[str, Any]]:
    """The (field under the stage, value) of ``override`` that replace what ``parts`` set."""
    head, rest = parts[0], parts[1:]
    if head in ("hyperparameters", "env") and len(rest) <= 1:
        values: dict[str, Any] = getattr(override, head)
        for name in rest or sorted(values):
            if name in values:
                yield f"{head}.{name}", values[name]
    elif head == "resources" and (not rest or rest == ["nodes"] or rest == ["flavor"]):
        for name in rest or ["nodes", "flavor"]:
            value = getattr(override, name)
            if value is not None:
                yield name, value
    elif head == "outputs" and rest and rest[1:] in ([], ["obs"]) and rest[0] in override.outputs:
        yield f"outputs.{rest[0]}", override.outputs[rest[0]].uri


def undefined_hyperparameters(
    spec: JobSpec, overrides: Sequence[str], flag: str = "--set"
) -> list[str]:
    """One warning per ``--set`` hyperparameter (top-level or a stage's) that no
    ``add_argument`` in the code defines."""
    named = []
    for text in overrides:
        name = _hyperparameter_named(_parts(text) or [])
        if name is not None:
            named.append((text, name))
    if not named:
        return []
    flags = code_flags(Path(spec.code.dir), spec.code.boot_file)
    if not flags:
        return []
    warnings = []
    for text, name in named:
        if name in flags:
            continue
        close = difflib.get_close_matches(name, sorted(flags), n=1)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        warnings.append(
            f"{flag} {text}: no add_argument in {spec.code.boot_file} or the code beside it "
            f"defines --{name}, so parse_args() will stop on --{name}=... (parse_known_args() "
            f"ignores it){hint}"
        )
    return warnings


def code_flags(code_dir: Path, boot_file: str) -> set[str]:
    """The options the boot file and the other ``.py`` files of ``code_dir`` define (the
    parser is often built in a module the boot file imports)."""
    from majob.spec.starter import defined_flags  # only a --set hyperparameter reads it

    flags: set[str] = set()
    for path in _python_files(code_dir, boot_file):
        try:
            if path.stat().st_size > MAX_BYTES:
                continue
            flags |= defined_flags(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
            continue  # unreadable or not Python 3: it defines nothing we can see
    return flags


def _python_files(code_dir: Path, boot_file: str) -> Iterator[Path]:
    yield code_dir / boot_file
    seen = 0
    for root, dirs, files in os.walk(code_dir):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d != "__pycache__")
        for name in sorted(files):
            path = Path(root) / name
            if name.endswith(".py") and path != code_dir / boot_file:
                seen += 1
                if seen > MAX_FILES:
                    return
                yield path


def _parts(text: str) -> list[str] | None:
    try:
        parts, _ = parse_override(text)
    except ValueError:
        return None  # load_spec has said what is wrong with it
    return parts

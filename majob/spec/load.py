"""Load a job spec from YAML: every problem at once, each at ``file:line:col``.

The steps, in order: read and parse as untrusted input (``majob.spec.safe_yaml``: at most 1 MiB,
UTF-8 only, core-schema tags only, aliases limited, positions kept), expand ``${VAR}`` references,
apply ``--set path=value`` overrides, fill defaults from the selected profile, resolve relative
paths against the spec file's directory, validate with the pydantic models, then check that the
local files the spec names exist. Problems from every step are gathered and raised together as
one ``SpecError``. The changes before validation are in ``spec/overrides.py``, the problems'
collector and the explanation of pydantic's errors in ``spec/problems.py``.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from majob.errors import SpecProblem
from majob.spec.envrefs import Origin, expand_refs, from_environ
from majob.spec.models import JobSpec
from majob.spec.overrides import (
    apply_local_inputs,
    apply_override,
    apply_profile,
    resolve_paths,
)
from majob.spec.positions import Positions
from majob.spec.problems import Problems, dotted, misspelled_fields, report_validation
from majob.spec.profiles import Profile, load_profile
from majob.spec.safe_yaml import YamlProblem, YamlRefused, compose, read_text, to_plain


def load_spec(
    path: str | os.PathLike[str],
    *,
    overrides: Sequence[str] = (),
    profile: str | Profile | None = None,
    environ: Mapping[str, str] | None = None,
    check_files: bool | Literal["code_dir"] = True,
    local_inputs: Mapping[str, str | os.PathLike[str]] | None = None,
) -> JobSpec:
    """Read, override, validate and return the spec at ``path``; raise ``SpecError`` with every
    problem found (or ``ConfigError`` for a bad profile). ``local_inputs`` (``--input
    NAME=PATH``, a relative PATH read from the current directory) replace the named inputs'
    ``local`` before anything is checked: a stand-in given on the command line rescues a spec
    whose own ``local`` does not exist here. ``check_files="code_dir"`` checks only that the
    code directory exists: ``majob submit`` checks the boot file and the stand-ins it needs in
    its pre-flight, which reports every problem at once."""
    env = os.environ if environ is None else environ
    selected = profile if isinstance(profile, Profile) else load_profile(profile, env)
    label = str(path)
    positions = Positions(label)
    problems = Problems(positions)
    data = _parse(Path(path), label, positions, problems)
    problems.raise_if_any()

    origin = Origin()
    data, unset = expand_refs(data, env, origin=origin)
    for loc, message in unset:
        problems.add(loc, message)
    for text in overrides:
        replaced = apply_override(data, text, positions, problems)
        if replaced is not None:
            origin.forget_below(replaced)
    apply_profile(data, selected)
    resolve_paths(data, Path(path).resolve().parent)
    apply_local_inputs(data, local_inputs or {}, positions, problems)

    validated = _validate(data)
    if not isinstance(validated, JobSpec):
        misspelled = misspelled_fields(validated)
        for detail in validated:
            if detail["type"] == "missing" and tuple(detail["loc"]) in misspelled:
                continue  # already said: "unknown key 'bootfile'; did you mean 'boot_file'?"
            report_validation(detail, problems)
        # Raised here, outside any ``except``: pydantic's error must not ride along as context.
        raise problems.error()
    spec = validated
    if check_files:
        _check_files(spec, problems, only_code_dir=check_files == "code_dir")
    problems.raise_if_any()
    return spec.with_from_environ(from_environ(origin))


def _validate(data: dict[str, Any]) -> JobSpec | list[ErrorDetails]:
    """The spec, or pydantic's error details (the exception itself stays in here)."""
    try:
        return JobSpec.model_validate(data)
    except ValidationError as error:
        return error.errors()


# -- parsing ---------------------------------------------------------------------------------


def _parse(path: Path, label: str, positions: Positions, problems: Problems) -> dict[str, Any]:
    try:
        text = read_text(path)
    except YamlRefused as refused:
        problems.items.append(_spec_problem(label, refused.problem))
        return {}
    try:
        document = compose(text)
    except YamlRefused as refused:
        problems.items.append(_spec_problem(label, refused.problem))
        return {}
    if document is None:
        problems.items.append(SpecProblem(label, 1, 1, "", "the file is empty: write a job spec"))
        return {}
    plain, found = to_plain(document, positions, text)
    problems.items.extend(_spec_problem(label, problem) for problem in found)
    if found:
        return {}
    if not isinstance(plain, dict):
        problems.items.append(
            SpecProblem(label, 1, 1, "", "a job spec is a mapping (name:, code:, image:, ...)")
        )
        return {}
    return plain


def _spec_problem(label: str, problem: YamlProblem) -> SpecProblem:
    return SpecProblem(label, problem.line, problem.col, dotted(problem.loc), problem.message)


# -- local files -------------------------------------------------------------------------------


def _check_files(spec: JobSpec, problems: Problems, *, only_code_dir: bool = False) -> None:
    code_dir = Path(spec.code.dir)
    if not code_dir.is_dir():
        problems.add(("code", "dir"), f"code directory {display_path(code_dir)} does not exist")
    if only_code_dir:
        return
    if code_dir.is_dir() and not (code_dir / spec.code.boot_file).is_file():
        problems.add(
            ("code", "boot_file"),
            f"boot file {spec.code.boot_file!r} is not in {display_path(code_dir)}",
        )
    stand_ins = [("inputs", i, c.local) for i, c in enumerate(spec.inputs)]
    stand_ins += [("volumes", i, v.local) for i, v in enumerate(spec.volumes)]
    for kind, index, local in stand_ins:
        if local is not None and not Path(local).exists():
            problems.add(
                (kind, index, "local"), f"local stand-in {display_path(Path(local))} does not exist"
            )


def display_path(path: Path) -> str:
    """``path`` relative to the current directory when it is below it, else absolute."""
    try:
        return str(path.relative_to(Path.cwd()))
    except ValueError:
        return str(path)

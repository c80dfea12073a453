"""Does the spec's preset engine match the environment the script works in here?

The guide: reuse a preset engine when the local PyTorch and CUDA match it; otherwise build a
custom image from an official one. :func:`check_env` compares Python (major.minor), PyTorch
(major.minor), the CUDA torch was built for (major), CANN for Ascend engines, and the CPU
architecture, and lists the third-party modules the code imports, which a preset image may
lack. The result feeds the "image compatible" item of ``majob checklist`` (``to_dict``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from majob.errors import MajobError
from majob.image.engine_ids import EngineIdError, EngineVersion, same_release, version_key
from majob.image.engines import PresetEngine, find_preset, preset_engines
from majob.image.localenv import TORCH_FAMILY, LocalEnv, imported_modules, probe
from majob.spec.models import JobSpec

Verdict = Literal["compatible", "incompatible", "unchecked"]


@dataclass(frozen=True)
class Comparison:
    problems: tuple[str, ...]  # each one makes the engine unfit
    notes: tuple[str, ...]  # worth knowing, not blocking


@dataclass(frozen=True)
class CheckEnvResult:
    spec: str
    image: str  # "PyTorch pytorch_1.8.0-..." or the SWR address
    verdict: Verdict
    problems: tuple[str, ...]
    notes: tuple[str, ...]
    closest: str | None  # the best-matching preset engine id, when one has no problem
    advice: str
    local: LocalEnv

    @property
    def ok(self) -> bool:
        return self.verdict != "incompatible"

    def to_dict(self) -> dict[str, Any]:
        return {
            "spec": self.spec,
            "image": self.image,
            "verdict": self.verdict,
            "ok": self.ok,
            "problems": list(self.problems),
            "notes": list(self.notes),
            "closest": self.closest,
            "advice": self.advice,
            "local": self.local.to_dict(),
        }


def compare(engine: EngineVersion, local: LocalEnv, imports: Sequence[str]) -> Comparison:
    """What keeps ``engine`` from running code that works with ``local``."""
    problems: list[str] = []
    notes: list[str] = []
    if not same_release(local.python, engine.python):
        problems.append(f"Python: {local.python} here, {engine.python} in the engine")
    uses_torch = local.torch is not None or "torch" in imports
    if uses_torch:
        if engine.pytorch is None:
            frameworks = ", ".join(f"{n} {v}" for n, v in engine.frameworks)
            problems.append(f"PyTorch: the engine has none ({frameworks})")
        elif local.torch_release is None:
            notes.append(
                f"the code imports torch but {local.executable} has no torch; "
                f"the engine has PyTorch {engine.pytorch}"
            )
        elif not same_release(local.torch_release, engine.pytorch):
            problems.append(f"PyTorch: {local.torch} here, {engine.pytorch} in the engine")
    problems += _accelerator(engine, local, notes)
    if local.arch != engine.arch:
        notes.append(
            f"CPU: {local.arch} here, {engine.arch} in the engine: packages with native code "
            f"need {engine.arch} wheels"
        )
    return Comparison(tuple(problems), tuple(notes))


def _accelerator(engine: EngineVersion, local: LocalEnv, notes: list[str]) -> list[str]:
    if engine.cann is not None:
        if local.cuda is not None:
            notes.append(
                f"the engine is Ascend (CANN {engine.cann}) and torch here is a CUDA "
                f"{local.cuda} build: check the code with `majob check --target npu`"
            )
        if local.torch_npu is None:
            notes.append("no torch_npu here: the code has not been run on an NPU build yet")
        return []
    if local.cuda is None:
        if engine.cuda is not None and local.torch is not None:
            notes.append(
                f"torch here is a CPU build; the engine's torch uses CUDA {engine.cuda}, so "
                "test the GPU path in a debug job"
            )
        return []
    if engine.cuda is None:
        return [f"CUDA: torch here is built for CUDA {local.cuda}, the engine is CPU-only"]
    if version_key(local.cuda)[:1] != version_key(engine.cuda)[:1]:
        return [f"CUDA: torch here is built for {local.cuda}, the engine has {engine.cuda}"]
    if not same_release(local.cuda, engine.cuda):
        notes.append(f"CUDA: {local.cuda} here, {engine.cuda} in the engine (same major)")
    return []


def closest_engine(
    local: LocalEnv, imports: Sequence[str], presets: Sequence[PresetEngine]
) -> tuple[PresetEngine, Comparison] | None:
    """The preset engine with the fewest problems, nearest PyTorch release first."""
    if not presets:
        return None
    torch = version_key(local.torch_release or "0")

    def rank(engine: PresetEngine) -> tuple[int, tuple[int, ...], int]:
        comparison = compare(engine.version, local, imports)
        theirs = version_key(engine.version.pytorch or "0")
        distance = tuple(abs(a - b) for a, b in zip(torch[:3], theirs[:3], strict=False))
        return len(comparison.problems), distance, len(comparison.notes)

    best = min(presets, key=rank)
    return best, compare(best.version, local, imports)


def check_env(
    spec: JobSpec,
    spec_path: str,
    local: LocalEnv,
    imports: Sequence[str],
    presets: Sequence[PresetEngine] | None = None,
) -> CheckEnvResult:
    """Compare ``local`` (and the code's ``imports``) with the spec's image."""
    known = tuple(preset_engines() if presets is None else presets)
    nearest = closest_engine(local, imports, known)
    fit = nearest[0] if nearest and not nearest[1].problems else None
    if spec.image.is_custom:
        return _custom_image(spec, spec_path, local, fit)
    engine = _spec_engine(spec, spec_path, known)
    comparison = compare(engine.version, local, imports)
    verdict, advice = _verdict(engine, comparison, fit)
    return CheckEnvResult(
        spec=spec_path,
        image=f"{engine.name} {engine.id}",
        verdict=verdict,
        problems=comparison.problems,
        notes=(*comparison.notes, *_not_installed(local), *_third_party(local)),
        closest=fit.id if fit else None,
        advice=advice,
        local=local,
    )


def _custom_image(
    spec: JobSpec, spec_path: str, local: LocalEnv, fit: PresetEngine | None
) -> CheckEnvResult:
    """A custom image is not looked into: say what it must hold, and whether a preset fits."""
    advice = (
        f"a preset engine matches this environment: image.engine: {fit.name}, "
        f"image.version: {fit.id} (no image to build or push)"
        if fit
        else "keep the custom image; `majob image dockerfile` writes one matching this "
        "environment, `majob image inspect` checks its size"
    )
    return CheckEnvResult(
        spec=spec_path,
        image=str(spec.image.swr),
        verdict="unchecked",
        problems=(),
        notes=(
            "custom image: majob cannot see inside it; it must hold Python "
            f"{_minor(local.python)}"
            + (f" and PyTorch {_minor(local.torch_release)}" if local.torch_release else ""),
            *_not_installed(local),
        ),
        closest=fit.id if fit else None,
        advice=advice,
        local=local,
    )


def _spec_engine(spec: JobSpec, spec_path: str, known: tuple[PresetEngine, ...]) -> PresetEngine:
    """The preset engine the spec names, an ``EngineIdError`` naming the spec if none."""
    image = spec.image
    assert image.engine is not None and image.version is not None  # the model guarantees it
    try:
        return find_preset(image.engine, image.version, known)
    except EngineIdError as error:
        raise EngineIdError(
            f"{spec_path}: image.version: {error.message}", hint=error.hint
        ) from None


def _verdict(
    engine: PresetEngine, comparison: Comparison, fit: PresetEngine | None
) -> tuple[Verdict, str]:
    """Whether the spec's preset engine fits, and what to do."""
    if not comparison.problems:
        return "compatible", f"use the preset engine {engine.name} {engine.id}"
    if fit is not None:
        return "incompatible", f"switch to the preset engine {fit.name} {fit.id}: it matches"
    return "incompatible", (
        "no preset engine matches: build a custom image from an official one "
        "(`majob image dockerfile SPEC` writes its Dockerfile), or install the "
        "engine's versions here and test again"
    )


def _not_installed(local: LocalEnv) -> list[str]:
    """A note on the modules the code imports that the local Python lacks."""
    missing = [t for t in local.third_party if not t.found]
    if not missing:
        return []
    modules = ", ".join(t.module for t in missing)
    return [f"imported but not installed for {local.executable}: {modules}"]


def _third_party(local: LocalEnv) -> list[str]:
    """A note on the installed third-party modules (torch aside) a preset image may lack."""
    packages = [t for t in local.third_party if t.found and t.module not in TORCH_FAMILY]
    if not packages:
        return []
    return [
        "third-party imports the preset image may lack: "
        + ", ".join(
            t.module if t.requirement in (None, t.module) else f"{t.module} ({t.requirement})"
            for t in packages
        )
    ]


def check_spec_env(spec: JobSpec, spec_path: str, python: str | None = None) -> CheckEnvResult:
    """The whole check in one call (what ``majob checklist`` asks): find the code's imports,
    probe ``python`` (default: this interpreter), compare with the catalogue's engines."""
    imports = imported_modules(spec.code.dir)
    return check_env(spec, spec_path, probe(python, imports), imports)


def _minor(version: str | None) -> str:
    return ".".join(str(n) for n in version_key(version or "")[:2])


def engine_warning(spec: JobSpec, spec_path: str) -> str | None:
    """``majob image check-env`` as a pre-flight warning: why the spec's preset engine does not
    match the environment here (None when it does, or when it cannot be told: a custom image,
    or an engine the catalogue lacks, which pre-flight checks against the service)."""
    if spec.image.is_custom:
        return None
    imports = imported_modules(spec.code.dir)
    try:
        # No module look-ups: the problems need only Python, torch and CUDA (and the imports
        # read from the code), and a submit should not wait for a scan of every package here.
        result = check_env(spec, spec_path, probe(None, []), imports)
    except MajobError:
        return None
    if result.ok:
        return None
    return (
        f"the engine {result.image} does not match this environment ("
        + "; ".join(result.problems)
        + f"): code that runs here may fail there; `majob image check-env {spec_path}` "
        "says more"
    )

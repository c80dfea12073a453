"""majob: move PyTorch training code from your machine to Huawei Cloud ModelArts, safely.

The public API is listed once, in the ``if TYPE_CHECKING:`` block below: type checkers read the
imports there, and at run time ``__getattr__`` reads the same block (on the first public name
asked for) to learn where each name lives, and imports only that module. So ``import majob``
(and the CLI's start-up, which imports this package first) loads nothing it does not need.
``__all__`` is that list, casefold-sorted (a test pins it).

Nothing inside majob imports this package: it sits above every layer.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from majob import display
from majob.version import __version__ as __version__

if TYPE_CHECKING:
    from majob.api import jobs as jobs
    from majob.api import perf_report as perf_report
    from majob.api import submit as submit
    from majob.compile.rest import to_rest_body as to_rest_body
    from majob.compile.sdk import EstimatorCall as EstimatorCall
    from majob.compile.sdk import to_estimator as to_estimator
    from majob.errors import CompileError as CompileError
    from majob.errors import ConfigError as ConfigError
    from majob.errors import LedgerError as LedgerError
    from majob.errors import MajobError as MajobError
    from majob.errors import MigrationError as MigrationError
    from majob.errors import NodeFailedError as NodeFailedError
    from majob.errors import ObsUriError as ObsUriError
    from majob.errors import PipelineError as PipelineError
    from majob.errors import PreflightError as PreflightError
    from majob.errors import RunnerError as RunnerError
    from majob.errors import RunTimeoutError as RunTimeoutError
    from majob.errors import ServiceAuthError as ServiceAuthError
    from majob.errors import ServiceError as ServiceError
    from majob.errors import ServiceNotFound as ServiceNotFound
    from majob.errors import ServiceUnreachable as ServiceUnreachable
    from majob.errors import SpecError as SpecError
    from majob.errors import SpecProblem as SpecProblem
    from majob.errors import StageRefused as StageRefused
    from majob.errors import StorageAuthError as StorageAuthError
    from majob.errors import StorageError as StorageError
    from majob.errors import StorageIntegrityError as StorageIntegrityError
    from majob.errors import StorageNotFound as StorageNotFound
    from majob.errors import StorageUnreachable as StorageUnreachable
    from majob.errors import UserInputError as UserInputError
    from majob.migrate.checker import check_paths as check_paths
    from majob.migrate.checker import check_source as check_source
    from majob.migrate.findings import FileReport as FileReport
    from majob.migrate.findings import Finding as Finding
    from majob.migrate.rewrite import migrate_source as migrate_source
    from majob.perf.report import Diagnosis as Diagnosis
    from majob.pipeline.flow import Pipeline as Pipeline
    from majob.pipeline.rehearsal import Rehearsal as Rehearsal
    from majob.pipeline.rehearsal import RehearsalOptions as RehearsalOptions
    from majob.pipeline.rehearsal import rehearse as rehearse
    from majob.pipeline.results import PipelineResult as PipelineResult
    from majob.pipeline.results import StageResult as StageResult
    from majob.runner.local import run_local as run_local
    from majob.runner.result import RunResult as RunResult
    from majob.service.base import Job as Job
    from majob.spec.job_image import Image as Image
    from majob.spec.load import load_spec as load_spec
    from majob.spec.models import Channel as Channel
    from majob.spec.models import Code as Code
    from majob.spec.models import Distributed as Distributed
    from majob.spec.models import Input as Input
    from majob.spec.models import JobSpec as JobSpec
    from majob.spec.models import Output as Output
    from majob.spec.models import Resources as Resources
    from majob.spec.models import StageOverride as StageOverride
    from majob.spec.models import Stages as Stages
    from majob.spec.profiles import Profile as Profile
    from majob.spec.profiles import load_profile as load_profile
    from majob.spec.schema import spec_json_schema as spec_json_schema
    from majob.spec.set_checks import SetWarning as SetWarning
    from majob.storage.uri import ObsUri as ObsUri
    from majob.sweep.results import SweepResult as SweepResult
    from majob.sweep.run import Sweep as Sweep


_homes: dict[str, str] = {}  # public name -> module, read from the block above on first use


def _read_homes() -> dict[str, str]:
    if not _homes:
        import ast

        with open(__file__, encoding="utf-8") as source:
            tree = ast.parse(source.read())
        listing = next(
            node
            for node in tree.body
            if isinstance(node, ast.If) and ast.unparse(node.test) == "TYPE_CHECKING"
        )
        homes: dict[str, str] = {}
        for node in listing.body:
            assert isinstance(node, ast.ImportFrom) and node.module is not None
            homes.update((alias.name, node.module) for alias in node.names)
        _homes.update(homes)  # at once: another thread never sees half of it
    return _homes


def __getattr__(name: str) -> Any:
    if name == "__all__":
        value: Any = sorted(_read_homes(), key=str.casefold)
    else:
        module = _read_homes().get(name)
        if module is None:
            raise AttributeError(f"module 'majob' has no attribute {name!r}")
        value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_read_homes()})


def _load_notebook() -> None:
    import majob.notebook  # noqa: F401  (registers the renderers of majob's values)


# Jupyter (or a script calling job.metrics()) asks a value for a view: only then is the
# presentation module imported.
display.load_with(_load_notebook)

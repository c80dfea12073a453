"""majob: move PyTorch training code from your machine to Huawei Cloud ModelArts, safely.

The public API is the sorted ``__all__`` below (a test pins it). Names are resolved lazily on
first use, so ``import majob`` (and the CLI's start-up) loads nothing it does not need.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from majob.compile.rest import to_rest_body
    from majob.compile.sdk import EstimatorCall, to_estimator
    from majob.errors import (
        CompileError,
        ConfigError,
        LedgerError,
        MajobError,
        MigrationError,
        NodeFailedError,
        ObsUriError,
        PipelineError,
        PreflightError,
        RunnerError,
        RunTimeoutError,
        ServiceAuthError,
        ServiceError,
        ServiceNotFound,
        ServiceUnreachable,
        SpecError,
        SpecProblem,
        StageRefused,
        StorageAuthError,
        StorageError,
        StorageIntegrityError,
        StorageNotFound,
        StorageUnreachable,
        UserInputError,
    )
    from majob.migrate.checker import check_paths, check_source
    from majob.migrate.findings import FileReport, Finding
    from majob.migrate.rewrite import migrate_source
    from majob.pipeline.flow import Pipeline, PipelineResult, StageResult
    from majob.runner.local import run_local
    from majob.runner.result import RunResult
    from majob.service.api import jobs, submit
    from majob.service.base import Job
    from majob.spec.load import load_spec
    from majob.spec.models import (
        Channel,
        Code,
        Distributed,
        Image,
        Input,
        JobSpec,
        Output,
        Resources,
        StageOverride,
        Stages,
    )
    from majob.spec.profiles import Profile, load_profile
    from majob.spec.schema import spec_json_schema
    from majob.storage.uri import ObsUri

__version__ = "0.1.0"

# public name -> module that defines it
_EXPORTS: dict[str, str] = {
    "ServiceUnreachable": "majob.errors",
    "LedgerError": "majob.errors",
    "PipelineError": "majob.errors",
    "StageRefused": "majob.errors",
    "Pipeline": "majob.pipeline.flow",
    "PipelineResult": "majob.pipeline.flow",
    "StageResult": "majob.pipeline.flow",
    "ServiceNotFound": "majob.errors",
    "ServiceAuthError": "majob.errors",
    "PreflightError": "majob.errors",
    "submit": "majob.service.api",
    "jobs": "majob.service.api",
    "Job": "majob.service.base",
    "Channel": "majob.spec.models",
    "Code": "majob.spec.models",
    "CompileError": "majob.errors",
    "ConfigError": "majob.errors",
    "Distributed": "majob.spec.models",
    "EstimatorCall": "majob.compile.sdk",
    "FileReport": "majob.migrate.findings",
    "Finding": "majob.migrate.findings",
    "check_paths": "majob.migrate.checker",
    "check_source": "majob.migrate.checker",
    "migrate_source": "majob.migrate.rewrite",
    "Image": "majob.spec.models",
    "Input": "majob.spec.models",
    "JobSpec": "majob.spec.models",
    "MajobError": "majob.errors",
    "MigrationError": "majob.errors",
    "NodeFailedError": "majob.errors",
    "ObsUri": "majob.storage.uri",
    "ObsUriError": "majob.errors",
    "Output": "majob.spec.models",
    "Profile": "majob.spec.profiles",
    "Resources": "majob.spec.models",
    "RunTimeoutError": "majob.errors",
    "RunnerError": "majob.errors",
    "RunResult": "majob.runner.result",
    "run_local": "majob.runner.local",
    "ServiceError": "majob.errors",
    "SpecError": "majob.errors",
    "SpecProblem": "majob.errors",
    "StageOverride": "majob.spec.models",
    "Stages": "majob.spec.models",
    "StorageAuthError": "majob.errors",
    "StorageError": "majob.errors",
    "StorageIntegrityError": "majob.errors",
    "StorageNotFound": "majob.errors",
    "StorageUnreachable": "majob.errors",
    "UserInputError": "majob.errors",
    "load_profile": "majob.spec.profiles",
    "load_spec": "majob.spec.load",
    "spec_json_schema": "majob.spec.schema",
    "to_estimator": "majob.compile.sdk",
    "to_rest_body": "majob.compile.rest",
}

__all__ = [
    "Channel",
    "check_paths",
    "check_source",
    "Code",
    "CompileError",
    "ConfigError",
    "Distributed",
    "EstimatorCall",
    "FileReport",
    "Finding",
    "Image",
    "Input",
    "Job",
    "jobs",
    "JobSpec",
    "LedgerError",
    "load_profile",
    "load_spec",
    "MajobError",
    "migrate_source",
    "MigrationError",
    "NodeFailedError",
    "ObsUri",
    "ObsUriError",
    "Output",
    "Pipeline",
    "PipelineError",
    "PipelineResult",
    "PreflightError",
    "Profile",
    "Resources",
    "run_local",
    "RunnerError",
    "RunResult",
    "RunTimeoutError",
    "ServiceAuthError",
    "ServiceError",
    "ServiceNotFound",
    "ServiceUnreachable",
    "spec_json_schema",
    "SpecError",
    "SpecProblem",
    "StageOverride",
    "StageRefused",
    "StageResult",
    "Stages",
    "StorageAuthError",
    "StorageError",
    "StorageIntegrityError",
    "StorageNotFound",
    "StorageUnreachable",
    "submit",
    "to_estimator",
    "to_rest_body",
    "UserInputError",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'majob' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return [*globals(), *__all__]

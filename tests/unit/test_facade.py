"""The public API is pinned: a change to it is a deliberate edit of this list."""

from __future__ import annotations

import majob

PUBLIC = [
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


def test_all_is_pinned_and_casefold_sorted() -> None:
    assert majob.__all__ == PUBLIC
    assert sorted(PUBLIC, key=str.casefold) == PUBLIC


def test_every_public_name_resolves() -> None:
    for name in majob.__all__:
        assert getattr(majob, name) is not None, name


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        majob.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("expected AttributeError")

"""The public API is pinned: a change to it is a deliberate edit of ``HOMES`` below."""

from __future__ import annotations

import importlib

import majob

# Where each public name is defined: the façade must hand out that very object.
HOMES = {
    "majob.api": ["jobs", "perf_report", "submit"],
    "majob.compile.rest": ["to_rest_body"],
    "majob.compile.sdk": ["EstimatorCall", "to_estimator"],
    "majob.errors": [
        "CompileError", "ConfigError", "LedgerError", "MajobError", "MigrationError",
        "NodeFailedError", "ObsUriError", "PipelineError", "PreflightError", "RunnerError", "RunTimeoutError", "ServiceAuthError",
        "ServiceError", "ServiceNotFound", "ServiceUnreachable", "SpecError", "SpecProblem",
        "StageRefused", "StorageAuthError", "StorageError", "StorageIntegrityError", "StorageNotFound",
        "StorageUnreachable", "UserInputError",
    ],
    "majob.migrate.checker": ["check_paths", "check_source"],
    "majob.migrate.findings": ["FileReport", "Finding"],
    "majob.migrate.rewrite": ["migrate_source"],
    "majob.perf.report": ["Diagnosis"],
    "majob.pipeline.flow": ["Pipeline"],
    "majob.pipeline.results": ["PipelineResult", "StageResult"],
    "majob.pipeline.rehearsal": ["Rehearsal", "RehearsalOptions", "rehearse"],
    "majob.runner.local": ["run_local"],
    "majob.runner.result": ["RunResult"],
    "majob.service.base": ["Job"],
    "majob.spec.job_image": ["Image"],
    "majob.spec.load": ["load_spec"],
    "majob.spec.models": [
        "Channel", "Code", "Distributed", "Input", "JobSpec", "Output", "Resources",
        "StageOverride", "Stages",
    ],
    "majob.spec.profiles": ["Profile", "load_profile"],
    "majob.spec.schema": ["spec_json_schema"],
    "majob.spec.set_checks": ["SetWarning"],
    "majob.storage.uri": ["ObsUri"],
    "majob.sweep.results": ["SweepResult"],
    "majob.sweep.run": ["Sweep"],
}  # fmt: skip
PUBLIC = sorted((name for names in HOMES.values() for name in names), key=str.casefold)


def test_all_is_pinned_and_casefold_sorted() -> None:
    assert majob.__all__ == PUBLIC
    assert sorted(majob.__all__, key=str.casefold) == majob.__all__
    assert len(set(PUBLIC)) == len(PUBLIC)  # each name has one home


def test_every_public_name_is_the_object_its_module_defines() -> None:
    for module_name, names in HOMES.items():
        module = importlib.import_module(module_name)
        for name in names:
            exported = getattr(majob, name)
            assert exported is getattr(module, name), name
            assert exported.__module__ == module_name, name
            assert exported.__name__ == name, name


def test_every_error_name_is_a_majob_error() -> None:
    for name in HOMES["majob.errors"]:
        if name != "SpecProblem":  # one problem of a SpecError, not an exception
            assert issubclass(getattr(majob, name), majob.MajobError), name


def test_unknown_name_is_an_attribute_error() -> None:
    try:
        majob.no_such_thing  # type: ignore[attr-defined]  # noqa: B018
    except AttributeError as error:
        assert "no_such_thing" in str(error)
    else:
        raise AssertionError("expected AttributeError")

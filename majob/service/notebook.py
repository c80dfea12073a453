"""Submit from inside a ModelArts notebook, through the notebook's own SDK.

In a ModelArts notebook the ``modelarts`` package is preinstalled (it is not on PyPI) and
``Session()`` takes its credentials from the notebook, so no AK/SK is needed. There majob creates
the job with ``estimatorV2.Estimator(**call.estimator).fit(**call.fit)``, the call
``majob.compile.sdk.to_estimator`` compiles (reference §1). The code must already be at
``code.obs`` (``majob obs sync`` or ``majob submit`` from a machine with keys put it there).

The Estimator has no argument for annotations, so a job created this way carries no submit id:
the idempotent create of ``majob submit`` (search before retrying) is not available here, and a
failed ``fit`` is reported, never retried.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any

from majob.compile.sdk import EstimatorCall, InputData, OutputData, TrainingFiles, to_estimator
from majob.errors import ServiceError, UserInputError
from majob.masking import Masker
from majob.spec.models import JobSpec, Stage


def notebook_sdk_available() -> bool:
    """True inside a ModelArts notebook (where ``import modelarts`` works)."""
    return importlib.util.find_spec("modelarts") is not None


def _sdk() -> tuple[Any, Any, Any]:
    try:
        session = importlib.import_module("modelarts.session")
        params = importlib.import_module("modelarts.train_params")
        estimator = importlib.import_module("modelarts.estimatorV2")
    except ImportError as error:
        raise UserInputError(
            "the ModelArts notebook SDK (modelarts) is not importable here",
            hint="it is preinstalled in ModelArts notebooks; elsewhere use `majob submit`",
        ) from error
    return session, params, estimator


def _built(value: Any, params: Any) -> Any:
    """An ``EstimatorCall`` value with its SDK records turned into ``train_params`` objects."""
    if isinstance(value, (TrainingFiles, InputData, OutputData)):
        return getattr(params, value.sdk_class)(**value.kwargs())
    if isinstance(value, list):
        return [_built(item, params) for item in value]
    if isinstance(value, dict):
        return {key: _built(item, params) for key, item in value.items()}
    return value


def fit_call(call: EstimatorCall, session: Any = None, masker: Masker | None = None) -> str:
    """Run ``Estimator(session, **call.estimator).fit(**call.fit)``; the new job's id. A
    failure is a ``ServiceError`` with each secret of ``masker`` shown as ``***``."""
    masker = masker or Masker()
    session_module, params, estimator_module = _sdk()
    session = session if session is not None else session_module.Session()
    estimator = estimator_module.Estimator(
        session=session, **{k: _built(v, params) for k, v in call.estimator.items()}
    )
    failure: Exception | None = None
    try:
        job = estimator.fit(**{k: _built(v, params) for k, v in call.fit.items()})
    except Exception as error:  # the notebook SDK raises its own, undocumented exceptions
        failure = error
    if failure is not None:
        # The SDK's message may quote what it was sent (the job's values): masked, and chained
        # as a masked copy, raised outside the ``except`` so the original is not its context.
        raise ServiceError(
            masker.text(f"create job {call.job_name!r} through the notebook SDK failed: {failure}")
        ) from masker.exception(failure)
    return str(job.job_id)


def submit_in_notebook(spec: JobSpec, stage: Stage = "debug", session: Any = None) -> str:
    """Create ``spec``'s job for ``stage`` with the notebook SDK; the job id."""
    return fit_call(to_estimator(spec, stage), session, spec.from_environ.masker())

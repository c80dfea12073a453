"""Compile a JobSpec into what ModelArts accepts: the notebook SDK's Estimator call (sdk) and
the REST v2 create-training-job body (rest). Pure: no I/O, no cloud SDK imported."""

from majob.compile.rest import to_rest_body
from majob.compile.sdk import EstimatorCall, InputData, OutputData, TrainingFiles, to_estimator

__all__ = [
    "EstimatorCall",
    "InputData",
    "OutputData",
    "TrainingFiles",
    "to_estimator",
    "to_rest_body",
]

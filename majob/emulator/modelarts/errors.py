"""ModelArts's error answers: ``{"error_code", "error_msg", "error_solution"}`` with a status.

Codes from the reference (modelarts.md §2.1): 2751 duplicate job name, 2753 bad input/output
channels, 2755 algorithm not found, 2757 code dir, 2758 boot file, 2763 flavor, 2776 log not
ready. The others below are this emulator's choice where no code is documented; they are marked
so, and docs/emulator.md lists them.
"""

from __future__ import annotations

from typing import Any

DUPLICATE_NAME = "ModelArts.2751"
BAD_CHANNEL = "ModelArts.2753"
ALGORITHM_NOT_FOUND = "ModelArts.2755"
BAD_CODE_DIR = "ModelArts.2757"
BAD_BOOT_FILE = "ModelArts.2758"
BAD_FLAVOR = "ModelArts.2763"
LOG_NOT_READY = "ModelArts.2776"
# Not documented: the emulator's own codes.
BAD_REQUEST = "ModelArts.0101"
NOT_FOUND = "ModelArts.0104"
BAD_ENGINE = "ModelArts.2764"
BAD_STATE = "ModelArts.2767"
THROTTLED = "ModelArts.0105"
UNAVAILABLE = "ModelArts.0106"
# API Gateway's answer to a signature it cannot verify.
AUTH_FAILED = "APIGW.0301"


class ModelArtsError(Exception):
    """A refusal the HTTP adapter turns into ModelArts's error body."""

    def __init__(self, status: int, code: str, message: str, solution: str = "") -> None:
        super().__init__(f"{code}: {message}")
        self.status = status
        self.code = code
        self.message = message
        self.solution = solution

    def body(self) -> dict[str, Any]:
        return {
            "error_code": self.code,
            "error_msg": self.message,
            "error_solution": self.solution,
        }


def bad_request(message: str, solution: str = "", code: str = BAD_REQUEST) -> ModelArtsError:
    return ModelArtsError(400, code, message, solution)


def job_not_found(job_id: str) -> ModelArtsError:
    return ModelArtsError(
        404,
        NOT_FOUND,
        f"training job {job_id} does not exist",
        "check the job id (list jobs with POST /v2/{project_id}/training-job-searches)",
    )

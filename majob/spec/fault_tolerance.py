"""The spec's ``fault_tolerance:`` block: how ModelArts restarts a failed or hung job, and where
the script keeps the checkpoints a restarted job resumes from.

ModelArts restarts a training job when ``metadata.annotations`` ask for it
(``fault-tolerance/job-retry-num``, ``fault-tolerance/job-unconditional-retry``,
``fault-tolerance/hang-retry``); a restarted job gets fresh containers, so a checkpoint survives
only if it was saved under an output whose files are downloaded into the container before the
job starts ("Predownload" on that output). ``checkpoints: train_url/ckpt/`` names that output and
the folder under it.
"""

from __future__ import annotations

import re
from typing import Literal

from pydantic import Field, field_validator, model_validator

from majob.spec.fields import CHANNEL_PATTERN, SpecModel

# Huawei documents 1-128 for fault-tolerance/job-retry-num; 0 here means "no restarts".
MAX_RETRIES = 128


class FaultTolerance(SpecModel):
    """Automatic restarts of a failed or hung job, and the checkpoint folder it resumes from."""

    retries: int = Field(
        0,
        ge=0,
        le=MAX_RETRIES,
        description="How many times ModelArts may restart the job "
        "(fault-tolerance/job-retry-num, 1-128); 0: never.",
    )
    restart_on: Literal["faults", "any"] = Field(
        "faults",
        description="'faults': restart only after a hardware or platform fault ModelArts "
        "detects; 'any': after any failure, the script's own errors included "
        "(fault-tolerance/job-unconditional-retry).",
    )
    hang: bool = Field(
        False,
        description="Restart a job whose processes stop making progress "
        "(fault-tolerance/hang-retry).",
    )
    checkpoints: str | None = Field(
        None,
        description="Checkpoint folder as <output name>/<folder>/, e.g. train_url/ckpt/: that "
        "output is downloaded into the container before the job starts, so a restarted job "
        "finds the checkpoints saved before the failure.",
    )

    @field_validator("checkpoints")
    @classmethod
    def _output_and_folder(cls, value: str | None) -> str | None:
        if value is None:
            return None
        parts = [part for part in value.split("/") if part]
        if value.startswith("/") or not parts or any(p in (".", "..") for p in parts):
            raise ValueError(
                f"{value!r} must be <output name>/<folder>/, a folder under one of the "
                "outputs, e.g. train_url/ckpt/"
            )
        if not re.fullmatch(CHANNEL_PATTERN, parts[0]):
            raise ValueError(f"{value!r} must start with an output name, e.g. train_url/ckpt/")
        return "/".join(parts) + "/"

    @model_validator(mode="after")
    def _restarts_asked_for(self) -> FaultTolerance:
        if self.retries == 0 and (self.restart_on == "any" or self.hang):
            asked = "restart_on: any" if self.restart_on == "any" else "hang: true"
            raise ValueError(
                f"fault_tolerance.{asked} needs retries: set fault_tolerance.retries "
                f"(1-{MAX_RETRIES}), each restart counts against it"
            )
        return self

    @property
    def checkpoint_output(self) -> str | None:
        """The output that holds the checkpoints (``train_url`` of ``train_url/ckpt/``)."""
        return self.checkpoints.split("/", 1)[0] if self.checkpoints else None

    @property
    def checkpoint_folder(self) -> str:
        """The folder under that output (``ckpt`` of ``train_url/ckpt/``; ``''`` for the
        output itself)."""
        if not self.checkpoints:
            return ""
        return self.checkpoints.split("/", 1)[1].rstrip("/")


NO_FAULT_TOLERANCE = FaultTolerance.model_validate({})

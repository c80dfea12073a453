"""The image a job runs on: a preset engine of ModelArts (``engine`` + ``version``) or a custom
SWR image with its boot command (``swr`` + ``command``), checked as one block.
"""

from __future__ import annotations

from pydantic import Field, model_validator

from majob.spec.fields import SpecModel


class Image(SpecModel):
    """A preset engine (``engine`` + ``version``) or a custom SWR image (``swr`` + ``command``)."""

    engine: str | None = Field(None, description="Preset engine name, e.g. PyTorch.")
    version: str | None = Field(
        None,
        description="Preset engine version id, e.g. "
        "pytorch_1.8.0-cuda_10.2-py_3.7-ubuntu_18.04-x86_64.",
    )
    swr: str | None = Field(
        None, description="Custom image in SWR, e.g. swr.cn-north-4.myhuaweicloud.com/org/img:tag."
    )
    command: str | None = Field(
        None,
        description="Boot command of a custom image (one line; ${VAR} is expanded in the "
        "container, e.g. python ${MA_JOB_DIR}/code/train.py).",
    )
    uid: int | None = Field(None, ge=0, le=65535, description="User id a custom image runs as.")

    @model_validator(mode="after")
    def _one_kind(self) -> Image:
        if (self.engine is None) != (self.version is None):
            missing = "version" if self.version is None else "engine"
            raise ValueError(f"image.engine and image.version go together: add image.{missing}")
        if self.engine is None and self.swr is None:
            raise ValueError(
                "image needs a preset engine (engine + version) or a custom image (swr + command)"
            )
        if self.swr is not None and self.engine is None and not self.command:
            raise ValueError("a custom image needs image.command, e.g. 'python ${MA_JOB_DIR}/...'")
        if self.command is not None and self.swr is None:
            raise ValueError("image.command is only for custom images (image.swr); remove it")
        if self.command is not None and "\n" in self.command:
            raise ValueError("image.command must be one line: join commands with '&&' or ';'")
        if self.uid is not None and self.swr is None:
            raise ValueError("image.uid is only for custom images (image.swr); remove it")
        return self

    @property
    def is_custom(self) -> bool:
        return self.swr is not None

"""``modelarts.train_params`` (reference §1.2)."""

from __future__ import annotations


class TrainingFiles:
    def __init__(self, code_dir: str, boot_file: str | None = None, obs_path: str | None = None):
        self.code_dir = code_dir
        self.boot_file = boot_file
        self.obs_path = obs_path


class InputData:
    def __init__(
        self,
        obs_path: str,
        name: str,
        local_path: str | None = None,
        is_local_source: bool = False,
    ) -> None:
        self.obs_path = obs_path
        self.name = name
        self.local_path = local_path
        self.is_local_source = is_local_source


class OutputData:
    def __init__(
        self,
        obs_path: str,
        name: str,
        local_path: str | None = None,
        access_method: str | None = None,
    ) -> None:
        if not obs_path.endswith("/"):
            raise ValueError("OutputData.obs_path must end with '/'")
        self.obs_path = obs_path
        self.name = name
        self.local_path = local_path
        self.access_method = access_method

"""``modelarts.train_params`` (reference §1.2; sdkreference ``_0422``,
``modelarts-distributed-0003/0005``)."""

from __future__ import annotations


class TrainingFiles:
    """``code_dir``: ``obs://bucket/dir/``, or a notebook directory that is first copied to
    ``obs_path``; ``boot_file``: relative to ``code_dir`` or a full ``obs://`` path."""

    def __init__(self, code_dir: str, boot_file: str | None = None, obs_path: str | None = None):
        self.code_dir = code_dir
        self.boot_file = boot_file
        self.obs_path = obs_path


class InputData:
    """One input channel; with ``is_local_source`` the notebook data at ``local_path`` is first
    uploaded to ``obs_path``, else ``local_path`` is where the container gets the data."""

    def __init__(
        self,
        obs_path: str,
        name: str,
        local_path: str | None = None,
        is_local_source: bool = False,
    ) -> None:
        if is_local_source and not local_path:
            raise ValueError("InputData(is_local_source=True) needs local_path")
        self.obs_path = obs_path
        self.name = name
        self.local_path = local_path
        self.is_local_source = is_local_source


class OutputData:
    """One output channel: an OBS directory, the container's ``local_path`` for it, and how the
    script is told (``access_method`` ``"parameter"`` or ``"env"``)."""

    def __init__(
        self,
        obs_path: str,
        name: str,
        local_path: str | None = None,
        access_method: str | None = None,
    ) -> None:
        if not obs_path.endswith("/"):
            raise ValueError("OutputData.obs_path must end with '/'")
        if access_method not in (None, "parameter", "env"):
            raise ValueError("OutputData.access_method is 'parameter' or 'env'")
        self.obs_path = obs_path
        self.name = name
        self.local_path = local_path
        self.access_method = access_method

"""``modelarts.session.Session`` (reference §1.1): in a notebook, ``Session()``; else AK/SK."""

from __future__ import annotations

from majob.spec.emulator_state import running_emulator


class Session:
    def __init__(
        self,
        access_key: str | None = None,
        secret_key: str | None = None,
        project_id: str | None = None,
        region_name: str | None = None,
    ) -> None:
        # Inside a notebook the credentials come from the notebook: here, the emulator's.
        endpoints = running_emulator()
        self.access_key = access_key or endpoints.access_key
        self.secret_key = secret_key or endpoints.secret_key
        self.project_id = project_id or endpoints.project_id
        self.region_name = region_name or endpoints.region
        self.modelarts_endpoint = endpoints.modelarts

"""``modelarts.session.Session`` (reference §1.1; sdkreference ``_0123``, ``_0155``).

The documented forms:

- ``Session()`` in a notebook: credentials, project and region come from the notebook (here,
  from the running emulator);
- ``Session(access_key, secret_key, project_id, region_name)``.

The password forms (``Session(username, password, region_name, project_id)`` and
``Session(account, username, password, ...)``) need IAM, which the emulator does not serve:
the stand-in refuses them with a ``TypeError``, as it does any argument it does not know.

``Session.set_endpoint(iam_endpoint, obs_endpoint, modelarts_endpoint, region_name)`` (a class
method, called before ``Session(...)``) points the sessions made after it at other endpoints;
``session.obs`` is the OBS helper (``copy``, ``download_file``, ``upload_file``,
``is_obs_path_exists``, ``get_default_bucket``) and ``session.get_obs_client()`` an esdk-obs
``ObsClient``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from majob.spec.emulator_state import running_emulator
from modelarts._obs import ObsHelper


class Session:
    _endpoints: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        access_key: str | None = None,
        secret_key: str | None = None,
        project_id: str | None = None,
        region_name: str | None = None,
    ) -> None:
        notebook = running_emulator()  # what a notebook knows without being told
        given = Session._endpoints
        self.region_name = region_name or given.get("region_name") or notebook.region
        self.modelarts_endpoint = given.get("modelarts_endpoint") or notebook.modelarts
        self.obs_endpoint = given.get("obs_endpoint") or notebook.obs
        keyed = access_key is not None or secret_key is not None
        if keyed and not (access_key and secret_key and project_id and region_name):
            raise ValueError(
                "AK/SK authentication needs access_key, secret_key, project_id and region_name"
            )
        self.access_key = access_key or notebook.access_key
        self.secret_key = secret_key or notebook.secret_key
        self.project_id = project_id or notebook.project_id
        self._obs: ObsHelper | None = None

    @classmethod
    def set_endpoint(
        cls,
        iam_endpoint: str | None = None,
        obs_endpoint: str | None = None,
        modelarts_endpoint: str | None = None,
        region_name: str | None = None,
    ) -> None:
        given = {
            "iam_endpoint": iam_endpoint,
            "obs_endpoint": obs_endpoint,
            "modelarts_endpoint": modelarts_endpoint,
            "region_name": region_name,
        }
        cls._endpoints = {k: v for k, v in given.items() if v}

    @property
    def obs(self) -> ObsHelper:
        if self._obs is None:
            self._obs = ObsHelper(self.get_obs_client())
        return self._obs

    def get_obs_client(self) -> Any:
        from obs import ObsClient

        return ObsClient(
            access_key_id=self.access_key,
            secret_access_key=self.secret_key,
            server=self.obs_endpoint,
        )

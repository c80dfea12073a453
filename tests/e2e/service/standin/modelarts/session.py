"""``modelarts.session.Session`` (reference §1.1; sdkreference ``_0123``, ``_0155``).

The documented forms:

- ``Session()`` in a notebook: credentials, project and region come from the notebook (here,
  from the running emulator);
- ``Session(access_key, secret_key, project_id, region_name)``;
- ``Session(username, password, region_name, project_id)``: an account's password;
- ``Session(account, username, password, region_name, project_id)``: an IAM user of the
  account (``account`` is the domain name). A password is exchanged for temporary keys at IAM
  (``_iam.py``); the emulator serves no IAM, so these need ``set_endpoint(iam_endpoint=...)``.

``Session.set_endpoint(iam_endpoint, obs_endpoint, modelarts_endpoint, region_name)`` (a class
method, called before ``Session(...)``) points the sessions made after it at other endpoints;
``session.obs`` is the OBS helper (``copy``, ``download_file``, ``upload_file``,
``is_obs_path_exists``, ``get_default_bucket``) and ``session.get_obs_client()`` an esdk-obs
``ObsClient``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from majob.spec.emulator_state import running_emulator
from modelarts._iam import password_credentials
from modelarts._obs import ObsHelper


class Session:
    _endpoints: ClassVar[dict[str, str]] = {}

    def __init__(
        self,
        access_key: str | None = None,
        secret_key: str | None = None,
        project_id: str | None = None,
        region_name: str | None = None,
        *,
        account: str | None = None,
        username: str | None = None,
        password: str | None = None,
    ) -> None:
        notebook = running_emulator()  # what a notebook knows without being told
        given = Session._endpoints
        self.region_name = region_name or given.get("region_name") or notebook.region
        self.modelarts_endpoint = given.get("modelarts_endpoint") or notebook.modelarts
        self.obs_endpoint = given.get("obs_endpoint") or notebook.obs
        self.security_token: str | None = None
        if username is not None or password is not None or account is not None:
            access_key, secret_key = self._from_password(
                account, username, password, region_name, project_id
            )
        elif (access_key is not None or secret_key is not None) and not (
            access_key and secret_key and project_id and region_name
        ):
            raise ValueError(
                "AK/SK authentication needs access_key, secret_key, project_id and region_name"
            )
        self.access_key = access_key or notebook.access_key
        self.secret_key = secret_key or notebook.secret_key
        self.project_id = project_id or notebook.project_id
        self._obs: ObsHelper | None = None

    def _from_password(
        self,
        account: str | None,
        username: str | None,
        password: str | None,
        region_name: str | None,
        project_id: str | None,
    ) -> tuple[str, str]:
        if not (username and password and region_name and project_id):
            raise ValueError(
                "password authentication needs username, password, region_name and project_id"
            )
        iam = Session._endpoints.get("iam_endpoint")
        if iam is None:
            raise ValueError("no IAM endpoint: call Session.set_endpoint(iam_endpoint=...) first")
        access_key, secret_key, self.security_token = password_credentials(
            iam, account or username, username, password, project_id
        )
        return access_key, secret_key

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
            security_token=self.security_token,
            server=self.obs_endpoint,
        )

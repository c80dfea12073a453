"""The job's agency: temporary OBS credentials for the code inside a job's containers.

On ModelArts the code in a training container reaches OBS as the job's agency (the IAM agency
the user authorised ModelArts with), with temporary credentials the platform supplies; the
user's own AK/SK never enter the container. The emulator does the same: every job gets an access
key, secret key and security token of its own, accepted by the fake OBS while the job runs and
revoked when it ends. The container finds them in ``OBS_ACCESS_KEY_ID``,
``OBS_SECRET_ACCESS_KEY`` and ``OBS_SECURITY_TOKEN``, the variables esdk-obs-python's ``ENV``
security provider reads (how ModelArts itself hands them over is not public; docs/data.md).
"""

from __future__ import annotations

import secrets
import string
import threading
from collections.abc import MutableMapping

ENV_NAMES = ("OBS_ACCESS_KEY_ID", "OBS_SECRET_ACCESS_KEY", "OBS_SECURITY_TOKEN")
_KEY_ALPHABET = string.ascii_uppercase + string.digits


class JobAgency:
    """Mints and revokes the jobs' temporary credentials in the fake OBS's own tables:
    ``credentials`` (access key -> secret key) and ``tokens`` (access key -> security token).
    When the fake OBS checks no signatures (``credentials`` empty), a job gets none: adding one
    would turn the checks on for every client."""

    def __init__(
        self, credentials: MutableMapping[str, str], tokens: MutableMapping[str, str]
    ) -> None:
        self._credentials = credentials
        self._tokens = tokens
        self._granted: dict[str, str] = {}  # job id -> its access key
        self._lock = threading.Lock()

    def grant(self, job_id: str) -> dict[str, str]:
        """The job's credentials as container variables (the same ones again for a restart)."""
        if not self._credentials:
            return {}
        with self._lock:
            access_key = self._granted.get(job_id)
            if access_key is None:
                access_key = "".join(secrets.choice(_KEY_ALPHABET) for _ in range(20))
                self._credentials[access_key] = secrets.token_urlsafe(30)
                self._tokens[access_key] = secrets.token_urlsafe(48)
                self._granted[job_id] = access_key
            values = (access_key, self._credentials[access_key], self._tokens[access_key])
        return dict(zip(ENV_NAMES, values, strict=True))

    def revoke(self, job_id: str) -> None:
        """The job ended: its credentials stop working."""
        with self._lock:
            access_key = self._granted.pop(job_id, None)
            if access_key is not None:
                self._credentials.pop(access_key, None)
                self._tokens.pop(access_key, None)

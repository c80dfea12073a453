"""A tiny IAM for the notebook SDK's password sessions: the emulator serves no IAM.

Two documented calls (Huawei IAM API reference): ``POST /v3/auth/tokens`` takes a password
identity scoped to a project and answers 201 with the token in ``X-Subject-Token``;
``POST /v3.0/OS-CREDENTIAL/securitytokens`` takes that token (``X-Auth-Token``) and answers 201
with temporary keys ``{"credential": {"access", "secret", "securitytoken", "expires_at"}}``. The
temporary keys it hands out are the emulated cloud's test keys (the only ones its fakes take),
with a fresh security token. One user is known: ``DOMAIN``/``USER`` with ``PASSWORD``.
"""

from __future__ import annotations

import json
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from tests.loopback import serving

DOMAIN = "majob-account"
USER = "majob-user"
PASSWORD = "majob-test-password"


class _Handler(BaseHTTPRequestHandler):
    server: _IamServer

    def log_message(self, *args: object) -> None:  # quiet
        pass

    def _answer(self, status: int, body: dict[str, Any], token: str | None = None) -> None:
        data = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        if token:
            self.send_header("X-Subject-Token", token)
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self) -> None:
        body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"{}")
        identity = body.get("auth", {}).get("identity", {})
        if self.path == "/v3/auth/tokens" and identity.get("methods") == ["password"]:
            self._token(identity["password"]["user"], body["auth"].get("scope", {}))
        elif self.path == "/v3.0/OS-CREDENTIAL/securitytokens":
            self._temporary_keys(self.headers.get("X-Auth-Token", ""))
        else:
            self._answer(404, {"error_msg": f"no such API: POST {self.path}"})

    def _token(self, user: dict[str, Any], scope: dict[str, Any]) -> None:
        known = (user.get("domain", {}).get("name"), user.get("name"), user.get("password"))
        if known != (DOMAIN, USER, PASSWORD) or not scope.get("project"):
            self._answer(
                401, {"error": {"code": 401, "message": "The username or password is wrong."}}
            )
            return
        token = secrets.token_hex(32)
        self.server.tokens.add(token)
        self._answer(201, {"token": {"methods": ["password"], "project": scope["project"]}}, token)

    def _temporary_keys(self, token: str) -> None:
        if token not in self.server.tokens:
            self._answer(
                401,
                {
                    "error": {
                        "code": 401,
                        "message": "The request you have made requires authentication.",
                    }
                },
            )
            return
        access_key, secret_key = self.server.keys
        credential = {
            "access": access_key,
            "secret": secret_key,
            "securitytoken": secrets.token_hex(32),
            "expires_at": "2099-01-01T00:00:00.000000Z",
        }
        self._answer(201, {"credential": credential})


class _IamServer(ThreadingHTTPServer):
    def __init__(self, keys: tuple[str, str]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.keys = keys
        self.tokens: set[str] = set()


@contextmanager
def fake_iam(access_key: str, secret_key: str) -> Iterator[str]:
    """An IAM on 127.0.0.1 handing out ``access_key``/``secret_key``; its endpoint."""
    with serving(_IamServer((access_key, secret_key))) as endpoint:
        yield endpoint

"""The HTTP adapter of the fake OBS: path-style requests in, OBS-shaped responses out.

``ObsRequestHandler`` parses one request, authenticates it (``auth.py``), applies any fault
(``faults.py``) and routes it to the handlers per resource (``buckets.py``, ``objects.py``,
``multipart.py``, on ``request.py``'s plumbing), which call the backend (``models.py``).
``FakeObsServer`` runs it on a ``ThreadingHTTPServer`` (HTTP/1.1, keep-alive) on 127.0.0.1, in
a thread of this process or as the main loop of ``python -m majob.emulator.obs``.
"""

from __future__ import annotations

import json
import secrets
import time
import traceback
from collections.abc import Mapping
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from majob.emulator.defaults import (
    DEFAULT_ACCESS_KEY,
    DEFAULT_REQUEST_TIMEOUT,
    DEFAULT_SECRET_KEY,
    EMULATOR_REGION,
)
from majob.emulator.http import CONTROL_PREFIX, EmulatorServer, control
from majob.emulator.obs import auth
from majob.emulator.obs.buckets import LIST_ARGS, BucketHandlers, not_emulated
from majob.emulator.obs.errors import ObsServiceError
from majob.emulator.obs.faults import Fault, FaultInjector, FaultRule, LoggedRequest, RequestLog
from majob.emulator.obs.models import ObsBackend
from majob.emulator.obs.multipart import MultipartHandlers
from majob.emulator.obs.objects import GET_ARGS
from majob.emulator.obs.request import ObsHttpd
from majob.emulator.obs.wire import BodyTooShort, Response, split_query

# Query fields of a presigned URL: authentication, not part of what is asked.
AUTH_ARGS = frozenset(
    {
        "AWSAccessKeyId", "AccessKeyId", "Expires", "Signature", "X-Amz-Algorithm",
        "X-Amz-Credential", "X-Amz-Date", "X-Amz-Expires", "X-Amz-SignedHeaders",
        "X-Amz-Signature", "X-Amz-Security-Token", "x-obs-security-token",
    }
)  # fmt: skip
# The query fields the handlers read besides the sub-resources (which name an operation): any
# other field is ignored, as OBS and S3 ignore it (a cache-buster, botocore's ``x-id``, the
# ``content-type`` a V2 presigned URL carries).
READ_ARGS = LIST_ARGS | {
    "key-marker", "version-id-marker", "max-uploads", "upload-id-marker", "part-number-marker",
    "max-parts",
}  # fmt: skip


class FakeObsServer(EmulatorServer):
    """The fake OBS on 127.0.0.1. ``credentials`` maps access keys to secret keys (None: the
    documented test pair; empty: no signature checks); ``tokens`` maps the access keys that are
    temporary credentials to the security token they must send; a client that stalls longer
    than ``request_timeout`` seconds while sending a body gets 400 RequestTimeout."""

    thread_name = "fake-obs"
    server_class = ObsHttpd

    def __init__(
        self,
        *,
        port: int = 0,
        data_dir: Path | None = None,
        credentials: Mapping[str, str] | None = None,
        region: str = EMULATOR_REGION,
        seed: int = 0,
        tokens: Mapping[str, str] | None = None,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    ) -> None:
        self.backend = ObsBackend(data_dir, region=region)
        # Access keys that are temporary credentials: each must come with this security token.
        self.tokens: dict[str, str] = dict(tokens or {})
        # A dict of its own: the emulated ModelArts adds each job's temporary credentials to it.
        self.credentials: dict[str, str] = dict(
            {DEFAULT_ACCESS_KEY: DEFAULT_SECRET_KEY} if credentials is None else credentials
        )
        self.faults = FaultInjector(seed=seed)
        self.log: RequestLog[LoggedRequest] = RequestLog()
        self.region = region
        self.request_timeout = request_timeout
        super().__init__(ObsRequestHandler, port=port)

    def add_fault(self, **rule: Any) -> FaultRule:
        """Add a ``FaultRule`` (see its fields), e.g. ``add_fault(status=503, count=2)``."""
        return self.faults.add(FaultRule.from_dict(rule))

    def start(self) -> FakeObsServer:
        """Serve from a daemon thread of this process."""
        super().start()
        return self

    def close(self) -> None:
        self.backend.close()

    def __enter__(self) -> FakeObsServer:
        return self.start()


class ObsRequestHandler(BucketHandlers, MultipartHandlers):
    """One connection; requests on it are handled one after another (keep-alive)."""

    def do_GET(self) -> None:
        self._handle()

    def do_HEAD(self) -> None:
        self._handle()

    def do_PUT(self) -> None:
        self._handle()

    def do_POST(self) -> None:
        self._handle()

    def do_DELETE(self) -> None:
        self._handle()

    def _parse(self) -> str:
        """Set the request's fields; return its decoded path."""
        raw_path, _, self.raw_query = self.path.partition("?")
        if raw_path.startswith(("http://", "https://")):
            raw_path = "/" + raw_path.split("/", 3)[-1] if raw_path.count("/") >= 3 else "/"
        self.raw_path = raw_path
        self.query = split_query(self.raw_query)
        self.args = {
            name: value
            for name, value in self.query
            if name not in AUTH_ARGS and (name in auth.SUB_RESOURCES or name in READ_ARGS)
        }
        self.lower_headers = {name.lower(): value for name, value in self.headers.items()}
        authorization = self.lower_headers.get("authorization", "")
        self.family = (
            "obs"
            if authorization.startswith("OBS ")
            or any(h.startswith("x-obs-") for h in self.lower_headers)
            or "AccessKeyId" in self.args
            else "amz"
        )
        self.auth_kind = (
            "v4"
            if authorization.startswith("AWS4-") or "X-Amz-Signature" in self.raw_query
            else "obs"
            if authorization.startswith("OBS ")
            else "v2"
            if authorization.startswith("AWS ") or "Signature=" in self.raw_query
            else "anonymous"
        )
        self.request_id = secrets.token_hex(8).upper()
        self.body_consumed = False
        try:
            return unquote(raw_path, errors="strict")
        except UnicodeDecodeError:
            return unquote(raw_path)  # refused as InvalidURI by _handle

    def _handle(self) -> None:
        fake = self.server.fake
        path = self._parse()
        if path.startswith(CONTROL_PREFIX):
            self._send(self._control(path[len(CONTROL_PREFIX) :]))
            return
        # A client that stalls in the middle of its body is answered 400 RequestTimeout.
        self.connection.settimeout(fake.request_timeout)
        fault = fake.faults.pick(self.command, path, self.raw_query)
        error_code: str | None = None
        if fault is not None and fault.latency:
            time.sleep(fault.latency)
        try:
            self._check_framing()
            if fault is not None and fault.reset and self._body_length() != 0:
                self._reset_mid_request()
                fake.log.append(self._entry(path, 0, fault))
                return
            if fault is not None and fault.status is not None:
                self._drain()
                raise ObsServiceError(fault.status, fault.code, fault.message, resource=path)
            response = self._dispatch(path)
        except ObsServiceError as error:
            response = self._error(error)
            error_code = error.code
        except (BodyTooShort, ConnectionError):  # the client hung up in the middle of its body
            self.close_connection = True
            fake.log.append(self._entry(path, 499, fault))
            return
        except Exception as error:  # a bug of the fake: answer 500 rather than hang up
            traceback.print_exc()
            response = self._error(ObsServiceError(500, "InternalError", f"fake OBS: {error!r}"))
            error_code = "InternalError"
        if not self.body_consumed:
            try:
                self._drain()
            except (BodyTooShort, ConnectionError, ObsServiceError):
                self.close_connection = True
                self._send_quietly(response)
                return
        self.connection.settimeout(None)
        fake.log.append(self._entry(path, response.status, fault, error_code))
        if fault is not None and (fault.reset or fault.lose_answer):
            self._send(response, reset_half_way=True)
        else:
            self._send(response)

    def _send_quietly(self, response: Response) -> None:
        close = getattr(response.body, "close", None)
        if close is not None:
            close()

    def _entry(
        self, path: str, status: int, fault: Fault | None, error: str | None = None
    ) -> LoggedRequest:
        return LoggedRequest(
            self.command,
            path,
            self.raw_query,
            status,
            self.family,
            self.auth_kind,
            error,
            fault.label if fault else None,
        )

    # -- routing -----------------------------------------------------------------------------

    def _dispatch(self, path: str) -> Response:
        fake = self.server.fake
        try:
            unquote(self.raw_path, errors="strict")
        except UnicodeDecodeError:
            raise ObsServiceError(400, "InvalidURI", "Couldn't parse the specified URI.") from None
        bucket, _, key = path.lstrip("/").partition("/")
        if bucket and "apiversion" in self.args and not key:
            # The SDK's unauthenticated signature negotiation probe: OBS answers it for a
            # bucket that exists, and 404 NoSuchBucket for one that does not.
            self.backend.bucket(bucket)
            return Response(200, {"x-obs-api": "3.0"})
        if fake.credentials:
            access_key = auth.verify(
                auth.SignedRequest(self.command, self.raw_path, self.query, self.lower_headers),
                fake.credentials,
                fake.tokens,
                region=fake.region,
            )
            if access_key is None:
                raise ObsServiceError(403, "AccessDenied", "Anonymous access is forbidden")
        if not bucket:
            if self.command == "GET":
                return self._list_buckets()
            raise ObsServiceError(405, "MethodNotAllowed", "The specified method is not allowed")
        if not key:
            return self._bucket_request(bucket)
        return self._object_request(bucket, key)

    def _object_request(self, bucket: str, key: str) -> Response:
        method, args = self.command, self.args
        if "tagging" in args and method in ("PUT", "GET", "DELETE"):
            return self._tagging_request(bucket, key)
        if method == "PUT" and "partNumber" in args and "uploadId" in args:
            return self._upload_part(bucket, key, args["uploadId"])
        if method == "PUT" and not args:
            return self._put_object(bucket, key)
        if method in ("GET", "HEAD") and "uploadId" in args:
            return self._list_parts(bucket, key, args["uploadId"])
        if method in ("GET", "HEAD") and not set(args) - GET_ARGS:
            return self._get_object(bucket, key)
        if method == "DELETE" and "uploadId" in args:
            self.backend.abort_upload(bucket, key, args["uploadId"])
            return Response(204)
        if method == "DELETE" and not args:
            self.backend.delete_object(bucket, key)
            return Response(204)
        if method == "POST" and "uploads" in args:
            return self._initiate(bucket, key)
        if method == "POST" and "uploadId" in args:
            return self._complete(bucket, key, args["uploadId"])
        raise not_emulated(method, args)

    # -- control plane -----------------------------------------------------------------------

    def _control(self, what: str) -> Response:
        """The shared control plane (``/_majob/log``, ``/_majob/faults``): lets a test drive a
        fake that runs in another process."""
        fake = self.server.fake
        answer = control(what, self.command, self._read_small(), fake.faults, fake.log)
        status, payload = answer if answer is not None else (404, {"error": "unknown"})
        return Response(
            status, {"Content-Type": "application/json"}, json.dumps(payload).encode("utf-8")
        )

"""``ObsWire``: the store's GETs (an object into a file, a listing page) signed and sent by majob
itself, over one keep-alive connection per thread, without esdk-obs-python.

Why: on a stage of many small objects the SDK's path costs more client CPU than the request
(its signer ~0.15 ms, its request wrapper, model objects, the ``ElementTree`` parse of every
listing). This module signs with AWS Signature V4 as the SDK does with ``signature="v4"``
(``UNSIGNED-PAYLOAD``, path style on an IP endpoint, virtual-hosted style on a domain; the
temporary credentials' token as ``x-amz-security-token``), and, as the SDK does, does not check
an HTTPS endpoint's certificate (``ssl_verify=False``, the SDK's default majob keeps).

What it hands back is what ``ObsConnection._call`` reads from an SDK result: an answer with
``status`` (and, for an error, ``errorCode``, ``errorMessage``, ``requestId``), so the one
failure mapping and the one retry rule apply unchanged. A failure of the network raises one of
``obs_failures.NETWORK_ERRORS`` (any other socket ``OSError`` as a ``ConnectionError``): the
store maps it and sends the request again. Only the V4 signature is spoken here; a store
configured for ``v2``/``obs`` keeps the SDK's path (``ObsWire.speaks``).
"""

from __future__ import annotations

import hashlib
import hmac
import http.client
import re
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, TypeVar
from urllib.parse import quote, urlsplit

from majob.storage.config import Credentials, ObsConfig
from majob.storage.obs_failures import NETWORK_ERRORS

T = TypeVar("T")
UNSIGNED = "UNSIGNED-PAYLOAD"
_IPV4 = re.compile(r"^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$")  # the SDK's test for path style
_MAX_LINE = 65537
_CHUNK = 1 << 20
_ERROR_FIELD = re.compile(r"<(Code|Message|RequestId)>([^<]*)</\1>")


@dataclass(frozen=True)
class WireError:
    """An answer with a status >= 300, read as ``obs_failures.storage_error`` reads the SDK's."""

    status: int
    errorCode: str | None  # the SDK's names: what storage_error reads
    errorMessage: str | None
    requestId: str | None
    reason: str = ""


@dataclass(frozen=True)
class WireAnswer:
    """A 2xx answer read by the caller's ``read``: its status and what ``read`` returned."""

    status: int
    value: Any


class ObsWire:
    """Signed GETs to one endpoint; thread-safe (a connection per thread, kept alive)."""

    def __init__(self, config: ObsConfig, credentials: Credentials) -> None:
        parts = urlsplit(config.resolved_endpoint())
        self._https = parts.scheme == "https"
        self._host = parts.hostname or ""
        self._port = parts.port or (443 if self._https else 80)
        default_port = parts.port is None or parts.port == (443 if self._https else 80)
        self._netloc = self._host if default_port else f"{self._host}:{self._port}"
        self._path_style = bool(_IPV4.match(self._host))
        self._region = config.resolved_region()
        self._timeout = max(1, round(config.timeout))
        self._access_key = credentials.access_key
        self._secret_key = credentials.secret_key
        self._token = credentials.security_token
        self._keys: dict[str, bytes] = {}
        self._local = threading.local()
        self._all: list[_Connection] = []
        self._lock = threading.Lock()
        self._context: ssl.SSLContext | None = None
        if self._https:
            self._context = ssl.create_default_context()
            self._context.check_hostname = False
            self._context.verify_mode = ssl.CERT_NONE

    @staticmethod
    def speaks(config: ObsConfig) -> bool:
        """Whether this module can sign for ``config`` (V4 only)."""
        return config.signature == "v4"

    def get(
        self,
        bucket: str,
        key: str,
        query: dict[str, str],
        read: Callable[[WireResponse], T],
        headers: dict[str, str] | None = None,
    ) -> WireAnswer | WireError:
        """``GET`` the object ``key`` of ``bucket`` (``""``: the bucket, a listing) with
        ``query`` and ``headers`` (sent unsigned: ``Range``, ``If-Match``); a 2xx answer is
        handed to ``read`` (which must read its body to the end), an error answer read into a
        ``WireError``. A kept-alive connection the server closed while idle is opened again
        once, at once (no answer was read from it)."""
        host, path = self._address(bucket, key)
        target = path + ("?" + _query(query) if query else "")
        sent = {**self._signed_headers(host, path, query), **(headers or {})}
        head = "".join(f"{name}: {value}\r\n" for name, value in sent.items())
        request = f"GET {target} HTTP/1.1\r\n{head}\r\n".encode()
        connection = self._connection()
        try:
            try:
                response = connection.exchange(request)
            except _Stale:
                self._drop(connection)
                connection = self._connection()
                response = connection.exchange(request)
            if response.status >= 300:
                answer: WireAnswer | WireError = _error_answer(response)
            else:
                answer = WireAnswer(response.status, read(response))
            if not response.finished():
                raise http.client.IncompleteRead(b"")
            if response.will_close:
                self._drop(connection)
            return answer
        except BaseException as error:
            self._drop(connection)
            if (
                isinstance(error, OSError)
                and not isinstance(error, NETWORK_ERRORS)
                and error.filename is None  # the socket's, not a local file's
            ):
                raise ConnectionError(f"{type(error).__name__}: {error}") from error
            raise

    # -- addressing and signing ----------------------------------------------------------------

    def _address(self, bucket: str, key: str) -> tuple[str, str]:
        """The Host header and the encoded path (what the canonical request names too)."""
        if self._path_style:
            path = "/" + bucket + ("/" + key if key else "")
            return self._netloc, quote(path, safe="/~")
        return f"{bucket}.{self._netloc}", quote("/" + key, safe="/~")

    def _signed_headers(self, host: str, path: str, query: dict[str, str]) -> dict[str, str]:
        stamp = time.strftime("%Y%m%dT%H%M%SZ", time.gmtime())
        day = stamp[:8]
        headers = {"host": host, "x-amz-content-sha256": UNSIGNED, "x-amz-date": stamp}
        if self._token:
            headers["x-amz-security-token"] = self._token
        names = ";".join(sorted(headers))
        canonical = "\n".join(
            (
                "GET",
                path,
                _query(query),
                "".join(f"{name}:{headers[name]}\n" for name in sorted(headers)),
                names,
                UNSIGNED,
            )
        )
        scope = f"{day}/{self._region}/s3/aws4_request"
        to_sign = "\n".join(
            ("AWS4-HMAC-SHA256", stamp, scope, hashlib.sha256(canonical.encode()).hexdigest())
        )
        signature = hmac.new(self._signing_key(day), to_sign.encode(), hashlib.sha256)
        headers["Authorization"] = (
            f"AWS4-HMAC-SHA256 Credential={self._access_key}/{scope},"
            f"SignedHeaders={names},Signature={signature.hexdigest()}"
        )
        headers["User-Agent"] = "majob"
        return headers

    def _signing_key(self, day: str) -> bytes:
        """The V4 key of ``day`` (four HMACs, made once a day)."""
        found = self._keys.get(day)
        if found is None:
            found = ("AWS4" + self._secret_key).encode()
            for part in (day, self._region, "s3", "aws4_request"):
                found = hmac.new(found, part.encode(), hashlib.sha256).digest()
            self._keys = {day: found}
        return found

    # -- connections ---------------------------------------------------------------------------

    def _connection(self) -> _Connection:
        connection: _Connection | None = getattr(self._local, "connection", None)
        if connection is None:
            connection = _Connection(self._host, self._port, self._timeout, self._context)
            self._local.connection = connection
            with self._lock:
                self._all.append(connection)
        return connection

    def _drop(self, connection: _Connection) -> None:
        """Close this thread's connection after a failure: the next request opens another."""
        connection.close()
        self._local.connection = None
        with self._lock:
            if connection in self._all:
                self._all.remove(connection)

    def close(self) -> None:
        with self._lock:
            connections, self._all = self._all, []
        for connection in connections:
            connection.close()


def _query(query: dict[str, str]) -> str:
    """The canonical query string (sorted, every reserved character encoded): the request
    sends the same."""
    return "&".join(
        f"{quote(name, safe='~')}={quote(value, safe='~')}" for name, value in sorted(query.items())
    )


class _Stale(ConnectionError):
    """A kept-alive connection was closed before any byte of the answer came back."""


class _Connection:
    """One HTTP/1.1 keep-alive connection: a request out, its answer's head read back."""

    def __init__(self, host: str, port: int, timeout: float, context: ssl.SSLContext | None):
        self._address = (host, port)
        self._host = host
        self._timeout = timeout
        self._context = context
        self._socket: socket.socket | None = None
        self._file: Any = None
        self.used = False

    def exchange(self, request: bytes) -> WireResponse:
        """Send ``request``; the answer's status and headers (its body left to read)."""
        reused = self._socket is not None
        if self._socket is None:
            self._open()
        assert self._socket is not None
        try:
            self._socket.sendall(request)
            line = self._file.readline(_MAX_LINE)
        except ConnectionError as error:
            if reused:
                raise _Stale(str(error)) from error
            raise
        if not line:
            if reused:
                raise _Stale("the server closed the kept-alive connection")
            raise http.client.RemoteDisconnected("the server closed the connection")
        return WireResponse(line, self._file)

    def _open(self) -> None:
        sock = socket.create_connection(self._address, timeout=self._timeout)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self._context is not None:
            sock = self._context.wrap_socket(sock, server_hostname=self._host)
        self._socket, self._file = sock, sock.makefile("rb")

    def close(self) -> None:
        if self._file is not None:
            self._file.close()
        if self._socket is not None:
            self._socket.close()
        self._socket = self._file = None


class WireResponse:
    """An answer: ``status``, ``reason``, the headers (names lower case) and its body, read with
    ``read`` (a ``Content-Length`` body, a chunked one, or one that ends with the connection)."""

    def __init__(self, status_line: bytes, file: Any) -> None:
        parts = status_line.decode("latin-1").rstrip("\r\n").split(" ", 2)
        if len(parts) < 2 or not parts[0].startswith("HTTP/") or not parts[1].isdigit():
            raise http.client.BadStatusLine(status_line.decode("latin-1"))
        self.status = int(parts[1])
        self.reason = parts[2] if len(parts) > 2 else ""
        self.headers: dict[str, str] = {}
        while True:
            line = file.readline(_MAX_LINE)
            if line in (b"\r\n", b"\n"):
                break
            if not line:
                raise http.client.IncompleteRead(b"")
            name, _, value = line.decode("latin-1").partition(":")
            self.headers[name.strip().lower()] = value.strip()
        self._file = file
        self._chunked = "chunked" in self.headers.get("transfer-encoding", "").lower()
        length = self.headers.get("content-length")
        self._left: int | None = int(length) if length is not None and not self._chunked else None
        self.will_close = self.headers.get("connection", "").lower() == "close" or (
            self._left is None and not self._chunked
        )
        self._chunk_left = 0
        self._done = self._left == 0

    def getheaders(self) -> list[tuple[str, str]]:
        return list(self.headers.items())

    def getheader(self, name: str) -> str | None:
        return self.headers.get(name.lower())

    def finished(self) -> bool:
        """Whether the body was read to its end (the connection can carry the next request)."""
        return self._done

    def readinto(self, buffer: memoryview) -> int:
        """Read up to ``len(buffer)`` bytes of the body into ``buffer``; 0 at its end."""
        if self._done:
            return 0
        if self._chunked or self._left is None:
            data = self.read(len(buffer))
            buffer[: len(data)] = data
            return len(data)
        want = min(len(buffer), self._left)
        count: int = self._file.readinto(buffer[:want])
        if count < want:
            raise http.client.IncompleteRead(bytes(buffer[:count]), want - count)
        self._left -= count
        self._done = self._left == 0
        return count

    def read(self, amount: int = -1) -> bytes:
        """Up to ``amount`` bytes of the body (all of it for -1); ``b""`` at its end."""
        if self._done:
            return b""
        if self._chunked and amount < 0:
            return b"".join(iter(lambda: self._read_chunk(_CHUNK), b""))
        if self._chunked:
            return self._read_chunk(amount)
        if self._left is None:
            data: bytes = self._file.read() if amount < 0 else self._file.read1(amount)
            self._done = not data
            return data
        want = self._left if amount < 0 else min(amount, self._left)
        data = self._file.read(want)
        if len(data) < want:
            raise http.client.IncompleteRead(data, want - len(data))
        self._left -= len(data)
        self._done = self._left == 0
        return data

    def _read_chunk(self, amount: int) -> bytes:
        if self._chunk_left == 0:
            size_line = self._file.readline(_MAX_LINE)
            try:
                self._chunk_left = int(size_line.split(b";", 1)[0].strip(), 16)
            except ValueError as error:
                raise http.client.IncompleteRead(b"") from error
            if self._chunk_left == 0:
                while self._file.readline(_MAX_LINE) not in (b"\r\n", b"\n", b""):
                    pass  # trailers
                self._done = True
                return b""
        want = min(amount, self._chunk_left)
        data: bytes = self._file.read(want)
        if len(data) < want:
            raise http.client.IncompleteRead(data, want - len(data))
        self._chunk_left -= len(data)
        if self._chunk_left == 0:
            self._file.readline(_MAX_LINE)  # the CRLF after the chunk
        return data


def _error_answer(response: WireResponse) -> WireError:
    """An error answer: its XML ``<Error>`` (code, message, request id), or its headers (a
    HEAD-like answer without a body)."""
    body = response.read().decode("utf-8", "replace")
    fields = dict(_ERROR_FIELD.findall(body))
    request_id = response.getheader("x-obs-request-id") or response.getheader("x-amz-request-id")
    code = fields.get("Code") or response.getheader("x-obs-error-code")
    return WireError(
        status=response.status,
        errorCode=code or None,
        errorMessage=_unescape(fields.get("Message", "")) or None,
        requestId=fields.get("RequestId") or request_id or None,
        reason=response.reason,
    )


def _unescape(text: str) -> str:
    if "&" not in text:
        return text
    from xml.sax.saxutils import unescape

    return unescape(text, {"&quot;": '"', "&apos;": "'"})

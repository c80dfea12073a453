"""The fake ModelArts reads a request body only where its framing says it ends: a Content-Length
that is not a non-negative integer is a 400 and the connection is closed (as the fake OBS does,
with the same code), never a 500 or a handler thread waiting for the client to hang up."""

from __future__ import annotations

import json
import socket

import pytest

from majob.emulator.cloud import EmulatedCloud


def exchange(cloud: EmulatedCloud, request: bytes) -> bytes:
    """Send ``request`` and read until the server closes the connection (10 s at most: a server
    that waits for more of the body fails the test instead of hanging it)."""
    with socket.create_connection(("127.0.0.1", cloud.modelarts.port), timeout=10) as sock:
        sock.sendall(request)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
        return received


@pytest.mark.parametrize("length", ["abc", "-5", "1e3", "+7"])
@pytest.mark.parametrize("path", ["/v2/any/training-jobs", "/_majob/faults"])
def test_a_bad_content_length_is_a_400_and_the_connection_closes(
    cloud: EmulatedCloud, length: str, path: str
) -> None:
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Length: {length}\r\n\r\n"
    answer = exchange(cloud, head.encode() + b'{"status": 503}')
    status_line, _, rest = answer.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 400 "), answer[:300]
    headers, _, body = rest.partition(b"\r\n\r\n")
    assert b"connection: close" in headers.lower()
    error = json.loads(body)
    assert "Content-Length must be a non-negative integer" in error["error_msg"]
    assert cloud.modelarts.faults.rules == []  # the body after a bad framing is never read


def test_a_chunked_body_is_refused_rather_than_left_for_the_next_request(
    cloud: EmulatedCloud,
) -> None:
    head = "POST /_majob/faults HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
    answer = exchange(cloud, head.encode() + b'f\r\n{"status": 503}\r\n0\r\n\r\n')
    assert answer.startswith(b"HTTP/1.1 400 "), answer[:300]
    headers, _, rest = answer.partition(b"\r\n\r\n")
    length = next(
        int(line.split(b":", 1)[1])
        for line in headers.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    assert rest[length:] == b""  # no second answer: the chunks were not read as a request
    assert cloud.modelarts.faults.rules == []
